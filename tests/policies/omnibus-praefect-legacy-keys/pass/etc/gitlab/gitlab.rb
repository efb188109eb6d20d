# ok: omnibus-praefect-legacy-keys
praefect['enable'] = true
# ok: omnibus-praefect-legacy-keys
praefect['auto_migrate'] = false
praefect['configuration'] = {
  listen_addr: '0.0.0.0:2305',
  auth: { token: 'praefect-secret' },
  database: { host: '10.6.0.141', dbname: 'praefect_production' },
}
# ok: omnibus-praefect-legacy-keys
gitaly['configuration'] = { listen_addr: '0.0.0.0:8075' }
