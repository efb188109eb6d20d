praefect['enable'] = true
# expect: omnibus-praefect-legacy-keys col=10
praefect['database_host'] = 'pgbouncer.internal'
# expect: praefect-database-no-proxy col=10
praefect['database_host_no_proxy'] = 'postgres.internal'
# expect: praefect-database-no-proxy col=10
praefect['database_port_no_proxy'] = 5432
