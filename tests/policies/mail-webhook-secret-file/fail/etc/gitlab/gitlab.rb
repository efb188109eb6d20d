gitlab_rails['incoming_email_enabled'] = true
gitlab_rails['incoming_email_delivery_method'] = "webhook"
# relative: mail_room resolves it against its own working directory
# expect: mail-webhook-secret-file col=46
gitlab_rails['incoming_email_secret_file'] = ".gitlab_mailroom_secret"

gitlab_rails['service_desk_email_enabled'] = true
gitlab_rails['service_desk_email_delivery_method'] = "webhook"
# absolute, and found in this tree, but not a base64 32-byte key
# expect: mail-webhook-secret-file col=50
gitlab_rails['service_desk_email_secret_file'] = "/etc/gitlab/service_desk_secret"
