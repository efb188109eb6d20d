gitlab_rails['omniauth_providers'] = [
  # ok: omniauth-removed-providers
  { name: "openid_connect", label: "Azure", args: { name: "openid_connect", scope: ["openid", "profile"] } },
  # ok: omniauth-removed-providers
  { name: "github", app_id: "x", app_secret: "y" }
]
