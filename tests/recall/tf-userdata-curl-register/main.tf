locals {
  user_data = templatefile("${path.module}/template/runner-userdata.tpl", {
    coordinator_url            = var.coordinator_url
    project_registration_token = var.project_registration_token
    runner_tags                = "build,aws"
    lock_to_project            = "true"
    existing_token             = "none"
  })
}
