gitaly['env'] = {
  # ok: gitaly-git-config-env
  'SSL_CERT_DIR' => '/opt/gitlab/embedded/ssl/certs/',
}
