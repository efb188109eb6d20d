import gitlab

gl = gitlab.Gitlab.from_config()
# expect: rest-ci-lint-ref-sha col=55
result = gl.projects.get(1).ci_lint.get(dry_run=True, ref="main")
