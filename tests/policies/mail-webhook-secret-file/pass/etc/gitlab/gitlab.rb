gitlab_rails['incoming_email_delivery_method'] = "webhook"
# ok: mail-webhook-secret-file
gitlab_rails['incoming_email_secret_file'] = "/etc/gitlab/mailroom_secret"
# a file elsewhere on the server: only the path can be checked
# ok: mail-webhook-secret-file
gitlab_rails['service_desk_email_secret_file'] = "/var/opt/gitlab/service_desk_secret"
