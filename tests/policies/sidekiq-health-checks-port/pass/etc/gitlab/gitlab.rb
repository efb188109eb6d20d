# ok: sidekiq-health-checks-port
sidekiq['metrics_enabled'] = true
sidekiq['listen_port'] = 8082
sidekiq['health_checks_listen_address'] = "0.0.0.0"
sidekiq['health_checks_listen_port'] = 8092
