gitaly['enable'] = true
# expect: omnibus-gitaly-legacy-keys col=8
gitaly['listen_addr'] = "0.0.0.0:8075"
# expect: omnibus-gitaly-legacy-keys col=8
gitaly['auth_token'] = 'gitaly-secret'
# expect: omnibus-gitaly-legacy-keys col=8
gitaly["storage"] = [
  { 'name' => 'default', 'path' => '/var/opt/gitlab/git-data/repositories' },
]
# expect: omnibus-gitaly-legacy-keys col=8
gitaly['custom_hooks_dir'] = '/var/opt/gitlab/gitaly/custom_hooks'
# expect: omnibus-gitaly-legacy-keys col=8
gitaly['pack_objects_cache_enabled'] = true
