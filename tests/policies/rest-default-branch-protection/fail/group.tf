resource "gitlab_group" "platform" {
  name = "platform"
  path = "platform"
  # expect: rest-default-branch-protection col=3
  default_branch_protection = 2
}
