gitlab_rails['omniauth_providers'] = [
  # ok: omniauth-cas3-provider
  { name: 'openid_connect', label: 'Corporate sign-in' }
]
