praefect['configuration'] = {
  listen_addr: '0.0.0.0:2305',
  # expect: praefect-database-metrics-exclude col=3
  prometheus_exclude_database_from_default_metrics: true,
}
# expect: praefect-database-metrics-exclude col=10
praefect['separate_database_metrics'] = true
