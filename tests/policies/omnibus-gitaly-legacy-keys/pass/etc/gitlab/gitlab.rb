# ok: omnibus-gitaly-legacy-keys
gitaly['enable'] = true
# ok: omnibus-gitaly-legacy-keys
gitaly['env'] = { 'GODEBUG' => 'madvdontneed=1' }
# ok: omnibus-gitaly-legacy-keys
gitaly['consul_service_name'] = 'gitaly'
gitaly['configuration'] = {
  listen_addr: '0.0.0.0:8075',
  auth: { token: 'gitaly-secret' },
  storage: [{ name: 'default', path: '/var/opt/gitlab/git-data/repositories' }],
  hooks: { custom_hooks_dir: '/var/opt/gitlab/gitaly/custom_hooks' },
}
