resource "aws_instance" "manager" {
  ami = var.ami
  user_data = <<-EOT
    #!/bin/bash
    # expect: runner-docker-machine-executor col=88
    gitlab-runner register --non-interactive --url "${var.url}" --token "${var.token}" --executor docker+machine
  EOT
}
