praefect['enable'] = true
# expect: omnibus-praefect-legacy-keys col=10
praefect['database_host'] = 'pgbouncer.internal'
# ok: praefect-database-no-proxy
# expect: omnibus-praefect-legacy-keys col=10
praefect['database_direct_host'] = 'postgres.internal'
# ok: praefect-database-no-proxy
# expect: omnibus-praefect-legacy-keys col=10
praefect['database_direct_port'] = 5432
