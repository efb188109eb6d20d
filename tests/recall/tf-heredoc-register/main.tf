resource "google_compute_instance" "ci_manager" {
  name         = "ci-manager"
  machine_type = "e2-small"

  metadata_startup_script = <<SCRIPT
#!/bin/bash
apt-get install -y gitlab-runner
gitlab-runner register -n \
    --url ${var.coordinator_url} \
    --registration-token ${var.enrolment_token} \
    --executor "docker+machine" \
    --docker-image "debian:stable" \
    --tag-list "${var.manager_tags}" \
    --run-untagged="${var.take_untagged}" \
    --machine-machine-driver google
SCRIPT
}
