external_url 'https://gitlab.example.com'
# expect: omnibus-tls-1-0-1-1 col=7
nginx['ssl_protocols'] = "TLSv1 TLSv1.1"
# expect: omnibus-tls-1-0-1-1 col=16
registry_nginx['ssl_protocols'] = 'TLSv1.1 TLSv1.2 TLSv1.3'
# expect: omnibus-tls-1-0-1-1 col=13
pages_nginx['ssl_protocols'] = "TLSv1.2 TLSv1"
