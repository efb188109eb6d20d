sidekiq['enable'] = true
# ok: omnibus-sidekiq-concurrency-range
sidekiq['concurrency'] = 20
