import gitlab

gl = gitlab.Gitlab.from_config("work")
# ok: rest-runner-version-fields
print(gl.version())
for runner in gl.runners.list():
    # ok: rest-runner-version-fields
    print(runner.description, runner.manager_version if hasattr(runner, "manager_version") else "")
