gitlab_rails['omniauth_providers'] = [
  # ok: omniauth-authentiq-provider
  { name: 'openid_connect', label: 'Corporate sign-in' }
]
