resource "gitlab_group" "platform" {
  name = "platform"
  path = "platform"
  # ok: rest-default-branch-protection
  default_branch_protection_defaults {
    allow_force_push = false
  }
}

resource "gitlab_project" "app" {
  # ok: rest-default-branch-protection
  default_branch_protection = 2
}
