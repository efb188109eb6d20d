import gitlab

gl = gitlab.Gitlab.from_config()
project = gl.projects.get("group/app")
# expect: rest-ci-job-token-scope-enabled col=9
project.ci_job_token_scope_enabled = True
project.save()
