external_url 'https://gitlab.example.com'
# ok: omnibus-tls-1-0-1-1
nginx['ssl_protocols'] = "TLSv1.2 TLSv1.3"
# nginx['ssl_protocols'] = "TLSv1 TLSv1.1 TLSv1.2"
# ok: omnibus-tls-1-0-1-1
registry_nginx['ssl_protocols'] = "TLSv1.3"
# ok: omnibus-tls-1-0-1-1
postgresql['ssl_ciphers'] = 'TLSv1:!aNULL'
