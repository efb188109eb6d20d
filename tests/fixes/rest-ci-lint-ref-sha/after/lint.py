import gitlab

gl = gitlab.Gitlab.from_config()
result = gl.projects.get(1).ci_lint.get(dry_run=True, dry_run_ref="main")
print(result.valid)
