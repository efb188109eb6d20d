praefect['enable'] = true
# expect: omnibus-praefect-legacy-keys col=10
praefect['listen_addr'] = '0.0.0.0:2305'
# expect: omnibus-praefect-legacy-keys col=10
praefect['auth_token'] = 'praefect-secret'
# expect: omnibus-praefect-legacy-keys col=10
praefect['database_host'] = '10.6.0.141'
# expect: omnibus-praefect-legacy-keys col=10
praefect['virtual_storages'] = {
  'default' => {
    'nodes' => {
      'gitaly-1' => { 'address' => 'tcp://10.6.0.91:8075', 'token' => 'gitaly-secret' },
    },
  },
}
