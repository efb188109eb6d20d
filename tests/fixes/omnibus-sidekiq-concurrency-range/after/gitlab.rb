external_url 'https://gitlab.example.com'
sidekiq['enable'] = true
sidekiq['concurrency'] = 25
