registry_external_url 'https://registry.example.com'
registry['notifications'] = [
  {
    'name' => 'geo_event',
    'url' => 'https://gitlab.example.com/api/v4/container_registry_event/events',
    'timeout' => '500ms',
    # expect: registry-notifications-threshold col=5
    'threshold' => 5,
    'backoff' => '1s',
    'headers' => { 'Authorization' => ['Bearer S3CRET-NOTIFY-abc123'] }
  }
]
# expect: registry-notifications-threshold col=10
registry['default_notifications_threshold'] = 5
