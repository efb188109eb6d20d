external_url 'https://gitlab.example.com'
# ok: omnibus-bundled-mattermost
gitlab_rails['mattermost_url'] = 'https://chat.example.com'
