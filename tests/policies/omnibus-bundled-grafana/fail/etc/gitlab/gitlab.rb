prometheus['enable'] = true
# expect: omnibus-bundled-grafana col=9
grafana['enable'] = true
