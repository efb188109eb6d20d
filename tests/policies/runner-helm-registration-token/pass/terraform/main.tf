# The runner authentication token, and another chart's values: nothing to report.
resource "helm_release" "runner" {
  name  = "ci-runner"
  chart = "gitlab-runner"
  set {
    name  = "gitlabUrl"
    value = var.gitlab_url
  }
  set_sensitive {
    # ok: runner-helm-registration-token
    name  = "runnerToken"
    value = var.runner_token
  }
  # set {
  #   name  = "runnerRegistrationToken"
  #   value = var.old_token
  # }
}

resource "helm_release" "other" {
  name  = "metrics"
  chart = "prometheus-gitlab-exporter"
  set {
    # ok: runner-helm-registration-token
    name  = "runnerRegistrationToken"
    value = "not a GitLab chart"
  }
}
