import gitlab

gl = gitlab.Gitlab.from_config("work")

for runner in gl.runners_all.list(status="not_connected", iterator=True):
    print(runner.id, runner.description)
