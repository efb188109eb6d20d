external_url 'https://gitlab.example.com'
# ok: omnibus-gitconfig-system
gitaly['configuration'] = { git: { config: [{ key: 'fetch.fsckObjects', value: 'true' }] } }
