import gitlab

gl = gitlab.Gitlab("https://gitlab.example.com", private_token="...")
project = gl.projects.get("platform/api")
slack = project.integrations.get("slack")
slack.webhook = "https://hooks.slack.com/services/T000/B000/XXXX"
slack.save()
