## GitLab configuration for gitlab.larkspur.example (Linux package)
## Kept in git; deployed to /etc/gitlab/gitlab.rb by the platform team's Ansible role.

external_url 'https://gitlab.larkspur.example'
gitlab_rails['time_zone'] = 'Europe/Berlin'
gitlab_rails['initial_root_password'] = "S3CRET-initial-root-password"
gitlab_rails['initial_shared_runners_registration_token'] = "S3CRET-shared-runners-token"

### Email settings
gitlab_rails['smtp_enable'] = true
gitlab_rails['smtp_address'] = "smtp.larkspur.example"
gitlab_rails['smtp_port'] = 587
gitlab_rails['smtp_user_name'] = "gitlab@larkspur.example"
gitlab_rails['smtp_password'] = "S3CRET-smtp-password"

### Reply by email
gitlab_rails['incoming_email_enabled'] = true
gitlab_rails['incoming_email_address'] = "gitlab-incoming+%{key}@larkspur.example"
gitlab_rails['incoming_email_email'] = "gitlab-incoming@larkspur.example"
gitlab_rails['incoming_email_password'] = "S3CRET-imap-password"
gitlab_rails['incoming_email_host'] = "imap.larkspur.example"
gitlab_rails['incoming_email_port'] = 993
gitlab_rails['incoming_email_ssl'] = true
gitlab_rails['incoming_email_delivery_method'] = "sidekiq"

### Service Desk (moved to webhook delivery last quarter)
gitlab_rails['service_desk_email_enabled'] = true
gitlab_rails['service_desk_email_address'] = "support+%{key}@larkspur.example"
gitlab_rails['service_desk_email_password'] = "S3CRET-service-desk-password"
gitlab_rails['service_desk_email_delivery_method'] = "webhook"
gitlab_rails['service_desk_email_secret_file'] = "/etc/gitlab/mailroom_service_desk_secret"

### Git data: two storages on the NFS-free Gitaly cluster
git_data_dirs({
  "default" => { "gitaly_address" => "tcp://gitaly1.larkspur.internal:8075" },
  "archive" => { "gitaly_address" => "tcp://gitaly2.larkspur.internal:8075" },
})
gitlab_rails['gitaly_token'] = 'S3CRET-gitaly-token'

gitaly['configuration'] = {
  listen_addr: '0.0.0.0:8075',
  auth: { token: 'S3CRET-gitaly-token' },
  concurrency: [
    { rpc: '/gitaly.SmartHTTPService/PostReceivePack', max_per_repo: 20 },
  ],
  rate_limiting: [
    { rpc: '/gitaly.SSHService/SSHUploadPack', interval: '1m', burst: 5 },
  ],
}

### Background jobs
sidekiq['enable'] = true
sidekiq['queue_selector'] = true
sidekiq['queue_groups'] = ['urgency=high', 'resource_boundary=cpu', '*']
sidekiq['min_concurrency'] = 10
sidekiq['max_concurrency'] = 25

### Container registry
registry_external_url 'https://registry.larkspur.example'
registry['storage'] = {
  'swift' => {
    'authurl' => 'https://keystone.larkspur.example/v3',
    'username' => 'registry',
    'password' => 'S3CRET-swift-password',
    'container' => 'gitlab-registry',
  },
  'redirect' => { 'disable' => true },
}
registry['notifications'] = [
  {
    'name' => 'security_scanner',
    'url' => 'https://scanner.larkspur.example/registry-events',
    'timeout' => '500ms',
    'threshold' => 5,
    'backoff' => '1s',
    'headers' => { 'Authorization' => ['Bearer S3CRET-scanner-webhook'] },
  },
]
registry['default_notifications_threshold'] = 5

### Monitoring
prometheus_monitoring['enable'] = false
