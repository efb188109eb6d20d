postgres_exporter['enable'] = true
# expect: omnibus-postgres-exporter-per-table-stats col=19
postgres_exporter['per_table_stats'] = true
