gitlab_rails['omniauth_providers'] = [
  # expect: omniauth-cas3-provider col=5
  { name: 'cas3', label: 'Corporate sign-in' }
]
