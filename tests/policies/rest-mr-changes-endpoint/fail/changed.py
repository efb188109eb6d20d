import gitlab

gl = gitlab.Gitlab.from_config()
mr = gl.projects.get(1).mergerequests.get(3)
# expect: rest-mr-changes-endpoint col=18
for change in mr.changes()["changes"]:
    print(change["new_path"])
