resource "helm_release" "runner" {
  name       = "ci-runner"
  repository = "https://charts.gitlab.io"
  chart      = "gitlab-runner"

  set {
    name  = "gitlabUrl"
    value = var.gitlab_url
  }

  set_sensitive {
    # expect: runner-helm-registration-token col=13
    name  = "runnerRegistrationToken"
    value = var.registration_token
  }
}

resource "helm_release" "encoded" {
  name  = "runner-encoded"
  chart = "gitlab/gitlab-runner"
  values = [
    yamlencode({
      gitlabUrl = "https://gitlab.example.com"
      # expect: runner-helm-registration-token col=7
      runnerRegistrationToken = var.token
    })
  ]
}

resource "helm_release" "heredoc" {
  name  = "runner-heredoc"
  chart = "oci://registry.example.com/charts/gitlab-runner"
  values = [<<-EOT
    gitlabUrl: https://gitlab.example.com
    # expect: runner-helm-registration-token col=5
    runnerRegistrationToken: "${var.token}"
    %{ if var.privileged ~}
    runners:
      # expect: runner-helm-legacy-fields col=7
      privileged: true
    %{ endif ~}
  EOT
  ]
}

resource "helm_release" "provider_v3" {
  name  = "runner-v3"
  chart = "gitlab-runner"
  set = [
    { name = "gitlabUrl", value = "https://gitlab.example.com" },
    # expect: runner-helm-registration-token col=14
    { name = "runnerRegistrationToken", value = var.token },
  ]
}
