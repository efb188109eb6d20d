gitlab_rails['omniauth_providers'] = [
  # expect: omniauth-authentiq-provider col=5
  { name: 'authentiq', label: 'Corporate sign-in' }
]
