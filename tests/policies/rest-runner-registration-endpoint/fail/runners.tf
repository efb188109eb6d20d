# The load-test runners, registered with the project's registration token.
# expect: rest-runner-registration-endpoint col=11
resource "gitlab_runner" "loadtest" {
  registration_token = gitlab_project.app.runners_token
  description        = "loadtest"
  tag_list           = ["docker"]
}
