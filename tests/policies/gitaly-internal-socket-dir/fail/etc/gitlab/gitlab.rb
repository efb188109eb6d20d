external_url 'https://gitlab.example.com'

gitaly['enable'] = true
# expect: gitaly-internal-socket-dir col=8
gitaly['internal_socket_dir'] = '/var/opt/gitlab/gitaly/internal_sockets'
