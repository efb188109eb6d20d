sidekiq['enable'] = true
# expect: omnibus-sidekiq-concurrency-range col=9
sidekiq['min_concurrency'] = 5
# expect: omnibus-sidekiq-concurrency-range col=9
sidekiq['max_concurrency'] = 10 if ENV['LARGE_NODE']
