gitlab_rails['omniauth_providers'] = [
  # ok: omniauth-kerberos-provider
  { name: 'openid_connect', label: 'Corporate sign-in' }
]
