# resource "gitlab_runner" "old" { registration_token = var.token }
# ok: rest-runner-registration-endpoint
resource "gitlab_user_runner" "loadtest" {
  runner_type = "project_type"
  project_id  = gitlab_project.app.id
  tag_list    = ["docker"]
}
