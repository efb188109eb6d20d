external_url 'https://gitlab.example.com'
gitlab_rails['incoming_email_enabled'] = true
gitlab_rails['incoming_email_delivery_method'] = "sidekiq" # until the webhook secret is rolled out
gitlab_rails['service_desk_email_enabled'] = true
gitlab_rails['service_desk_email_delivery_method'] = 'sidekiq'
