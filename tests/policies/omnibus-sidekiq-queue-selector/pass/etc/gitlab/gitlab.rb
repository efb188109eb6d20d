# ok: omnibus-sidekiq-queue-selector
sidekiq['queue_selector'] = false
sidekiq['queue_groups'] = ['*'] * 4
