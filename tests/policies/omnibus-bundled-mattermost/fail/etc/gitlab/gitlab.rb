external_url 'https://gitlab.example.com'
# expect: omnibus-bundled-mattermost col=1
mattermost_external_url 'https://chat.example.com'
# expect: omnibus-bundled-mattermost col=12
mattermost['enable'] = true
# expect: omnibus-bundled-mattermost col=18
mattermost_nginx['redirect_http_to_https'] = true
