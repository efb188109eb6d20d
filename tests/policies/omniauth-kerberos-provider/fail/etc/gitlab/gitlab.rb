gitlab_rails['omniauth_providers'] = [
  # expect: omniauth-kerberos-provider col=5
  { name: 'kerberos', label: 'Corporate sign-in' }
]
