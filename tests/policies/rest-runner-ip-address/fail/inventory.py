import gitlab

gl = gitlab.Gitlab.from_config("work")
for runner in gl.runners_all.list(iterator=False):
    # expect: rest-runner-ip-address col=18
    print(runner.ip_address)
