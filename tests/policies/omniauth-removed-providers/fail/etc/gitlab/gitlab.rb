gitlab_rails['omniauth_enabled'] = true
gitlab_rails['omniauth_providers'] = [
  {
    # expect: omniauth-removed-providers col=5
    name: "facebook",
    app_id: "1234",
    app_secret: "s3cret"
  },
  # expect: omniauth-removed-providers col=5
  { "name" => "azure_oauth2", "args" => { "client_id" => "abc", "tenant_id" => "t" } }
]
