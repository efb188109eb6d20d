praefect['enable'] = true
praefect['database_host'] = 'pgbouncer.internal'
# ok: praefect-database-no-proxy
praefect['database_direct_host'] = 'postgres.internal'
# ok: praefect-database-no-proxy
praefect['database_direct_port'] = 5432
