# expect: sidekiq-health-checks-port col=1
sidekiq['metrics_enabled'] = true
sidekiq['listen_address'] = "0.0.0.0"
sidekiq['listen_port'] = 8082
