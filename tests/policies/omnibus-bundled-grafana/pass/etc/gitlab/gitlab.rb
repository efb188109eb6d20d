prometheus['enable'] = true
# ok: omnibus-bundled-grafana
grafana['enable'] = false
