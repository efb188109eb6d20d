external_url 'https://gitlab.example.com'

gitaly['enable'] = true
# ok: gitaly-internal-socket-dir
gitaly['runtime_dir'] = '/var/opt/gitlab/gitaly/run'
