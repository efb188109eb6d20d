resource "aws_instance" "manager" {
  ami = var.ami
  user_data = <<-EOT
    #!/bin/bash
    # ok: runner-docker-machine-executor
    gitlab-runner register --non-interactive --url "${var.url}" --token "${var.token}" --executor ${var.executor}
  EOT
  # ok: runner-docker-machine-executor
  description = "gitlab-runner register --executor docker+machine"
}
