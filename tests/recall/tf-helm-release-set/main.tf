locals {
  chart_repo = "https://charts.gitlab.io"
  chart_name = "gitlab-runner"
}

resource "helm_release" "ci_runner" {
  name       = "ci-runner"
  repository = local.chart_repo
  chart      = local.chart_name
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
