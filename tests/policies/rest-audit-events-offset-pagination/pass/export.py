import gitlab

gl = gitlab.Gitlab.from_config()
group = gl.groups.get("acme")
# ok: rest-audit-events-offset-pagination
for event in group.audit_events.list(iterator=True, pagination="keyset"):
    print(event.id)
