external_url 'https://gitlab.example.com'
sidekiq['enable'] = true
sidekiq['min_concurrency'] = 10
sidekiq['max_concurrency'] = 25
