gitlab_rails['omniauth_enabled'] = true
gitlab_rails['omniauth_providers'] = [
  {
    name: "dingtalk",
    app_id: "YOUR_APP_ID",
    app_secret: "YOUR_APP_SECRET"
  }
]
