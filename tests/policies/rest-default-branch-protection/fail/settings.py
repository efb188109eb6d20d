import gitlab

gl = gitlab.Gitlab.from_config("admin")
settings = gl.settings.get()
# expect: rest-default-branch-protection col=10
settings.default_branch_protection = 2
settings.save()
