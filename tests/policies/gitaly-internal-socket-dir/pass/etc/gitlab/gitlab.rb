external_url 'https://gitlab.example.com'

gitaly['enable'] = true
# ok: gitaly-internal-socket-dir
# expect: omnibus-gitaly-legacy-keys col=8
gitaly['runtime_dir'] = '/var/opt/gitlab/gitaly/run'
