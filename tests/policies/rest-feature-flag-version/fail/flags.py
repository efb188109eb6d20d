import gitlab

gl = gitlab.Gitlab.from_config()
project = gl.projects.get(1)
# expect: rest-feature-flag-version col=48
project.feature_flags.create({"name": "beta", "version": "new_version_flag"})
