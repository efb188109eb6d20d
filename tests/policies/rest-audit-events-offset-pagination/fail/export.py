import gitlab

gl = gitlab.Gitlab.from_config()
group = gl.groups.get("acme")
# expect: rest-audit-events-offset-pagination col=38
for event in group.audit_events.list(get_all=True):
    print(event.id)
