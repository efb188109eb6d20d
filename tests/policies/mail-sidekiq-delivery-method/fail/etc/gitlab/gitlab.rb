external_url 'https://gitlab.example.com'

### Reply by email
gitlab_rails['incoming_email_enabled'] = true
gitlab_rails['incoming_email_address'] = "gitlab-incoming+%{key}@example.com"
# expect: mail-sidekiq-delivery-method col=14
gitlab_rails['incoming_email_delivery_method'] = "sidekiq"

### Service Desk
gitlab_rails['service_desk_email_enabled'] = true
# expect: mail-sidekiq-delivery-method col=14
gitlab_rails['service_desk_email_delivery_method'] = :sidekiq
