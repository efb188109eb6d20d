# expect: omnibus-sidekiq-queue-selector col=9
sidekiq['queue_selector'] = true
sidekiq['queue_groups'] = [
  'feature_category=issue_tracking',
  'urgency=high',
]
# expect: omnibus-sidekiq-queue-selector col=9
sidekiq["negate"] = true
