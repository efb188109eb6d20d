resource "helm_release" "ci_runner" {
  name       = "ci-runner"
  repository = "https://charts.gitlab.io"
  chart      = "gitlab-runner"
  namespace  = var.namespace

  set {
    name  = "gitlabUrl"
    value = var.coordinator_url
  }

  set {
    name  = "image"
    value = "gitlab/gitlab-runner:${var.runner_tag}"
  }

  set {
    name  = "runnerRegistrationToken"
    value = var.enrolment_token
  }
}
