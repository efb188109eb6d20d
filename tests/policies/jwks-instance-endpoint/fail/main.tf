resource "vault_jwt_auth_backend" "gitlab" {
  path         = "jwt"
  # expect: jwks-instance-endpoint col=36
  jwks_url     = "${var.gitlab_url}/-/jwks"
  bound_issuer = var.gitlab_url
}
