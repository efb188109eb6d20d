gitaly['env'] = {
  'SSL_CERT_DIR' => '/opt/gitlab/embedded/ssl/certs/',
  # expect: gitaly-git-config-env col=3
  'GIT_CONFIG_SYSTEM' => '/etc/gitaly/gitconfig',
}
