external_url 'https://gitlab.example.com'
gitlab_rails['incoming_email_enabled'] = true
# ok: mail-sidekiq-delivery-method
gitlab_rails['incoming_email_delivery_method'] = "webhook"
# ok: mail-sidekiq-delivery-method
# gitlab_rails['service_desk_email_delivery_method'] = "sidekiq"
gitlab_rails['service_desk_email_enabled'] = true
# Omnibus defaults to webhook: a missing setting is fine here
