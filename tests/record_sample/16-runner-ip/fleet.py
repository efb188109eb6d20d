import gitlab

gl = gitlab.Gitlab.from_config()
for r in gl.runners_all.list(iterator=True):
    runner = gl.runners.get(r.id)
    print(f"{runner.description}: {runner.ip_address}")
