import gitlab

gl = gitlab.Gitlab.from_config()
config = gl.projects.get(7).approvals.get()
# expect: rest-approval-config-approvers col=14
print(config.approval_groups)
