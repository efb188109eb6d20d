praefect['configuration'] = {
  # ok: praefect-database-metrics-exclude
  prometheus_listen_addr: '0.0.0.0:9652',
}
