resource "helm_release" "build_runner" {
  name       = "build-runner"
  repository = "https://charts.gitlab.io"
  chart      = "gitlab-runner"
  version    = "0.59.2"

  set {
    name  = "runnerRegistrationToken"
    value = var.enrolment_token
  }

  values = [
    <<-EOT
runners:
  tags: "${var.runner_tag}"
  privileged: true
  namespace: "builds"
  config: |
    [[runners]]
      executor = "kubernetes"
EOT
  ]

  set {
    name  = "gitlabUrl"
    value = var.coordinator_url
  }
}
