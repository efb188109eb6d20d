postgres_exporter['enable'] = true
# ok: omnibus-postgres-exporter-per-table-stats
postgres_exporter['flags'] = { 'collector.stat_user_tables' => true }
