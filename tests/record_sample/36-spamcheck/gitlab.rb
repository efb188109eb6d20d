external_url 'https://gitlab.example.com'

spamcheck['enable'] = true
spamcheck['monitoring_address'] = ':8003'
