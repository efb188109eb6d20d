# ruff: noqa: E501  (one planted form a line)
"""A tree of planted secrets: more than 200 forms, each on a line sunset reports.

The forms are the published shapes of credentials — GitLab's token prefixes, the token formats of
the services pipelines talk to (as public secret-scanner rule sets such as gitleaks' describe
them), and the ways scripts and settings write passwords (headers, flags, URLs, cookies, defaults,
here-strings, comments). Every value is made here, deterministically, from its name: random
characters of the format's alphabet, or for the forms recognised by where they stand, plain
low-entropy words that only the context gives away. Nothing here is a real credential.
"""

from __future__ import annotations

import hashlib
import random
import string
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
LOWER = string.ascii_lowercase + string.digits
UPPER = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"
WORDS = ("tiger", "maple", "otter", "cobalt", "harbor", "violet", "summit", "walnut", "ember", "falcon", "meadow", "quartz")


@dataclass(frozen=True)
class Form:
    name: str
    template: str  # the line's text after the finding's own words; {v} is the planted value
    value: str


def _rng(name: str) -> random.Random:
    return random.Random(hashlib.sha256(name.encode()).digest())


def made(name: str, prefix: str, alphabet: str, length: int, suffix: str = "") -> str:
    rng = _rng(name)
    return prefix + "".join(rng.choice(alphabet) for _ in range(length)) + suffix


def weak(name: str) -> str:
    """A password a person picks: two words and a number (low entropy; only its place tells)."""
    rng = _rng(name)
    return f"{rng.choice(WORDS)}{rng.choice(WORDS).capitalize()}{rng.randint(10, 99)}"


# (name, template, prefix, alphabet, length[, suffix]): a value in a token format, anywhere.
FORMATTED: list[tuple[str, str, str, str, int] | tuple[str, str, str, str, int, str]] = [
    # GitLab
    ("gitlab-pat", "curl -s {v} >/dev/null", "glpat-", URLSAFE, 20),
    ("gitlab-pat-routable", "TOKEN_LIST='{v}'", "glpat-", URLSAFE, 36, ".01.0w1a2b3c4"),
    ("gitlab-runner-auth", "gitlab-runner verify --url x --token {v}", "glrt-", URLSAFE, 20),
    ("gitlab-runner-auth-routable", "echo {v}", "glrt-t1_", URLSAFE, 27, ".01.1a2b3c4d5"),
    ("gitlab-deploy", "git clone https://deployer:{v}@gitlab.example.com/g/p.git", "gldt-", URLSAFE, 20),
    ("gitlab-trigger", "curl -X POST -F token={v} -F ref=main $URL", "glptt-", HEX, 40),
    ("gitlab-feed", "wget '$CI_SERVER_URL/dashboard/issues.atom?feed_token={v}'", "glft-", URLSAFE, 20),
    ("gitlab-incoming-mail", "echo incoming+{v}@example.com", "glimt-", URLSAFE, 25),
    ("gitlab-agent", "helm upgrade agent --set config.token={v}", "glagent-", URLSAFE, 50),
    ("gitlab-job-token", "curl -H 'JOB-TOKEN: {v}' $URL", "glcbt-a1B_", URLSAFE, 20),
    ("gitlab-oauth-secret", "echo {v} | tee app.secret", "gloas-", URLSAFE, 64),
    ("gitlab-scim", "echo {v}", "glsoat-", URLSAFE, 20),
    ("gitlab-ff-client", "UNLEASH_INSTANCE_ID={v}", "glffct-", URLSAFE, 20),
    ("gitlab-registration", "gitlab-runner register -r {v}", "GR1348941", URLSAFE, 20),
    ("gitlab-registration-bare", "echo GR1348941 then {v}", "GR1348941", URLSAFE, 20),
    ("gitlab-session", "curl -b '_gitlab_session={v}' $URL", "", LOWER, 32),
    # cloud providers
    ("aws-akia", "aws configure set aws_access_key_id {v}", "AKIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
    ("aws-asia", "export AWS_ACCESS_KEY_ID={v}", "ASIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
    ("aws-a3t", "echo {v}", "A3TX", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
    ("aws-secret", "aws_secret_access_key={v}", "", B64, 40),
    ("aws-secret-bare", "echo {v} >> creds", "", B64, 40),
    ("aws-bedrock", "echo {v}", "ABSK", B64, 120),
    ("gcp-api-key", "curl 'https://maps.example.com/?key={v}'", "AIza", URLSAFE, 35),
    ("gcp-bare", "echo {v}", "AIza", URLSAFE, 35),
    ("azure-ad-secret", "AZURE_CLIENT_SECRET={v}", "abc8Q~", URLSAFE, 34),
    ("azure-storage-key", "AccountKey={v}==", "", B64, 86),
    ("azure-sas", "curl 'https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sig={v}'", "", B64, 43),
    ("s3-presigned", "curl 'https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature={v}'", "", HEX, 64),
    ("alibaba", "echo {v}", "LTAI", LOWER, 20),
    ("digitalocean-pat", "doctl auth init -t {v}", "dop_v1_", HEX, 64),
    ("digitalocean-oauth", "echo {v}", "doo_v1_", HEX, 64),
    ("digitalocean-refresh", "echo {v}", "dor_v1_", HEX, 64),
    ("cloudflare-origin-ca", "echo {v}", "v1.0-", HEX, 24, "-" + "a1b2c3d4" * 18 + "ab"),
    ("flyio", "flyctl deploy --access-token {v}", "fo1_", URLSAFE, 43),
    ("heroku-v2", "echo {v}", "HRKU-AA", URLSAFE, 58),
    ("scalingo", "echo {v}", "tk-us-", URLSAFE, 48),
    ("hashicorp-tf", "echo {v}", "abcdefghij1234.atlasv1.", URLSAFE, 64),
    ("vault-service", "vault login {v}", "hvs.", URLSAFE, 95),
    ("vault-batch", "echo {v}", "hvb.", URLSAFE, 140),
    ("vault-legacy", "echo {v}", "s.", ALNUM, 24),
    ("doppler", "doppler run --token {v}", "dp.pt.", ALNUM, 43),
    ("databricks", "echo {v}", "dapi", HEX, 32),
    ("dynatrace", "echo {v}", "dt0c01.", UPPER, 24, "." + "A1B2C3D4" * 8),
    ("pulumi", "pulumi login --token {v}", "pul-", HEX, 40),
    ("infracost", "echo {v}", "ico-", ALNUM, 32),
    ("prefect", "echo {v}", "pnu_", ALNUM, 36),
    ("planetscale-token", "echo {v}", "pscale_tkn_", URLSAFE, 43),
    ("planetscale-oauth", "echo {v}", "pscale_oauth_", URLSAFE, 43),
    ("planetscale-password", "echo {v}", "pscale_pw_", URLSAFE, 43),
    ("octopus", "echo {v}", "API-", UPPER, 26),
    ("openshift", "oc login --token={v}", "sha256~", URLSAFE, 43),
    ("grafana-cloud", "echo {v}", "glc_", B64, 60),
    ("grafana-service-account", "echo {v}", "glsa_", ALNUM, 32, "_0a1b2c3d"),
    ("grafana-api-key", "echo {v}", "eyJrIjoi", ALNUM, 80),
    ("1password-service", "op run --token {v}", "ops_eyJ", B64, 260),
    ("age-secret-key", "echo {v}", "AGE-SECRET-KEY-1", "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
    # source hosting, registries, package managers
    ("github-pat", "git clone https://{v}@github.com/o/r.git", "ghp_", ALNUM, 36),
    ("github-oauth", "echo {v}", "gho_", ALNUM, 36),
    ("github-app", "echo {v}", "ghs_", ALNUM, 36),
    ("github-user-app", "echo {v}", "ghu_", ALNUM, 36),
    ("github-refresh", "echo {v}", "ghr_", ALNUM, 36),
    ("github-fine-grained", "gh auth login --with-token <<< {v}", "github_pat_", URLSAFE, 82),
    ("npm", "npm config set //registry.npmjs.org/:_authToken {v}", "npm_", ALNUM, 36),
    ("npm-bare", "echo {v}", "npm_", ALNUM, 36),
    ("pypi", "twine upload -p {v} dist/*", "pypi-AgEIcHlwaS5vcmc", URLSAFE, 60),
    ("rubygems", "echo {v}", "rubygems_", HEX, 48),
    ("clojars", "echo {v}", "CLOJARS_", LOWER, 60),
    ("artifactory-api", "echo {v}", "AKCp", ALNUM, 69),
    ("artifactory-reference", "echo {v}", "cmVmd", ALNUM, 59),
    ("readme", "echo {v}", "rdme_", LOWER, 70),
    ("postman", "echo {v}", "PMAK-", HEX, 24, "-" + "a1b2c3d4e5" * 3 + "abcd"),
    ("sourcegraph", "echo {v}", "sgp_", HEX, 40),
    ("shopify-access", "echo {v}", "shpat_", HEX, 32),
    ("shopify-custom", "echo {v}", "shpca_", HEX, 32),
    ("shopify-private", "echo {v}", "shppa_", HEX, 32),
    ("shopify-shared", "echo {v}", "shpss_", HEX, 32),
    ("easypost", "echo {v}", "EZAK", ALNUM, 54),
    ("easypost-test", "echo {v}", "EZTK", ALNUM, 54),
    # messaging and webhooks
    ("slack-bot", "echo {v}", "xoxb-1234567890-1234567890123-", ALNUM, 24),
    ("slack-user", "echo {v}", "xoxp-1234567890-1234567890-1234567890-", HEX, 32),
    ("slack-app", "echo {v}", "xapp-1-A0123BCDE-1234567890-", HEX, 64),
    ("slack-legacy", "echo {v}", "xoxa-2-", ALNUM, 40),
    ("slack-webhook", "curl -X POST https://hooks.slack.com/services/{v}", "T0123ABCD/B0123ABCD/", ALNUM, 24),
    ("slack-workflow", "curl -X POST https://hooks.slack.com/workflows/{v}", "T0123ABCD/A0123ABCD/123456789012345678/", ALNUM, 24),
    ("discord-webhook", "curl -X POST https://discord.com/api/webhooks/{v}", "123456789012345678/", URLSAFE, 68),
    ("teams-webhook", "curl https://acme.webhook.office.com/webhookb2/{v}", "", LOWER, 40),
    ("telegram", "curl https://api.telegram.org/bot{v}/getMe", "123456789:A", URLSAFE, 34),
    ("twilio", "echo {v}", "SK", HEX, 32),
    ("sendgrid", "echo {v}", "SG.", URLSAFE, 22, "." + "Ab3dE" * 8 + "Ab3"),
    ("sendinblue", "echo {v}", "xkeysib-", HEX, 64, "-AbCdEf0123456789"),
    ("mailgun", "curl --user api:{v} $URL", "key-", HEX, 32),
    ("mailchimp", "echo {v}", "", HEX, 32, "-us12"),
    ("stripe-live", "echo {v}", "sk_live_", ALNUM, 24),
    ("stripe-test", "echo {v}", "sk_test_", ALNUM, 24),
    ("stripe-restricted", "echo {v}", "rk_live_", ALNUM, 24),
    ("square-access", "echo {v}", "sq0atp-", URLSAFE, 22),
    ("square-secret", "echo {v}", "sq0csp-", URLSAFE, 43),
    ("facebook-page", "echo {v}", "EAAC", ALNUM, 100),
    ("flutterwave", "echo {v}", "FLWSECK_TEST-", "abcdefgh0123456789", 32, "-X"),
    ("duffel", "echo {v}", "duffel_test_", URLSAFE, 43),
    ("frameio", "echo {v}", "fio-u-", URLSAFE, 64),
    ("linear", "echo {v}", "lin_api_", ALNUM, 40),
    ("notion", "echo {v}", "ntn_12345678901", ALNUM, 35),
    ("atlassian", "echo {v}", "ATATT3", URLSAFE, 186),
    ("huggingface", "huggingface-cli login --token {v}", "hf_", string.ascii_letters, 34),
    ("openai", "echo {v}", "sk-proj-", URLSAFE, 74, "T3BlbkFJ"),
    ("anthropic", "echo {v}", "sk-ant-api03-", URLSAFE, 93, "AA"),
    ("perplexity", "echo {v}", "pplx-", ALNUM, 48),
    ("sentry-user", "echo {v}", "sntryu_", HEX, 64),
    ("sentry-org", "echo {v}", "sntrys_eyJpYXQiO", B64, 120),
    ("sentry-dsn", "SENTRY_DSN=https://{v}@o123456.ingest.sentry.io/1234567", "", HEX, 32),
    ("new-relic", "echo {v}", "NRAK-", UPPER, 27),
    ("datadog", "echo {v}", "", HEX, 32),
    ("maxmind", "echo {v}", "AbC123_", ALNUM, 29, "_mmk"),
    ("jwt", "curl -H \"X-Auth: {v}\" $URL", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ", URLSAFE, 60, ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"),
    ("jwt-bare", "echo {v}", "eyJhbGciOiJSUzI1NiJ9.eyJ", URLSAFE, 80, ".AbC"),
    ("ssh-key-line", "echo {v}", "AAAAC3NzaC1lZDI1NTE5AAAAI", B64, 43),
    ("uuid-key", "HEROKU_API={v}", "", HEX, 8, "-4a2b-4c3d-8e9f-" + "0a1b2c3d4e5f"),
    ("base64-blob", "echo {v} | base64 -d", "", B64, 64, "=="),
    ("hex-key-128", "SECRET_KEY_BASE {v}", "", HEX, 128),
    ("hex-32-bare", "echo {v}", "", HEX, 32),
    ("random-alnum-20", "echo {v}", "", ALNUM, 20),
    ("random-alnum-32-quoted", "echo \"{v}\"", "", ALNUM, 32),
    ("random-urlsafe-40", "x={v}", "", URLSAFE, 40),
    ("random-in-path", "curl $CI_SERVER_URL/hooks/{v}/run", "", ALNUM, 30),
    ("random-after-colon", "echo note:{v}", "", ALNUM, 24),
    ("random-in-json", "echo '{{\"k\":\"{v}\"}}'", "", ALNUM, 28),
]

# (name, template): a low-entropy password that only where it stands gives away.
PLACED: list[tuple[str, str]] = [
    ("header-private-token-nospace", 'curl -H "PRIVATE-TOKEN:{v}" $URL'),
    ("header-private-token", "curl --header 'PRIVATE-TOKEN: {v}' $URL"),
    ("header-bearer-nospace", "curl -H 'Authorization:Bearer {v}' $URL"),
    ("header-bearer", 'curl -H "Authorization: Bearer {v}" $URL'),
    ("header-job-token", 'curl -H "JOB-TOKEN: {v}" $URL'),
    ("header-deploy-token", "curl -H 'Deploy-Token: {v}' $URL"),
    ("header-basic-subshell", 'curl -H "Authorization: Basic $(echo -n root:{v} | base64)" $URL'),
    ("header-echo-subshell", 'curl -H "PRIVATE-TOKEN: $(echo {v})" $URL'),
    ("header-adjacent-quotes", "curl -H 'PRIVATE-TOKEN: '\"{v}\" $URL"),
    ("header-x-api-key", "curl -H 'X-API-Key: {v}' $URL"),
    ("httpie", "http PUT $URL PRIVATE-TOKEN:{v} active=false"),
    ("oauth2-bearer", "curl --oauth2-bearer {v} $URL"),
    ("curl-user", "curl -u root:{v} $URL"),
    ("curl-user-long", "curl --user 'admin:{v}' $URL"),
    ("curl-cert", "curl -E client.pem:{v} $URL"),
    ("curl-cert-long", "curl --cert client.pem:{v} $URL"),
    ("curl-proxy-user", "curl --proxy-user bob:{v} $URL"),
    ("cookie-header", "curl -H 'Cookie: _gitlab_session={v}' $URL"),
    ("cookie-jar", "curl -b 'session_id={v}' $URL"),
    ("docker-login-p", "docker login -u deployer -p {v} registry.example.com"),
    ("docker-login-password", "docker login --username deployer --password {v} registry.example.com"),
    ("docker-password-stdin", 'echo "{v}" | docker login --password-stdin -u deployer registry.example.com'),
    ("printf-password-stdin", "printf '%s' '{v}' | podman login --password-stdin -u d registry.example.com"),
    ("here-string-stdin", "docker login --password-stdin -u d registry.example.com <<< {v}"),
    ("mysql-glued", "mysql -uroot -p{v} -e 'select 1'"),
    ("mysqldump-glued", "mysqldump -h db -uroot -p{v} app > dump.sql"),
    ("sshpass", "sshpass -p {v} ssh deploy@host"),
    ("redis-cli", "redis-cli -h cache -a {v} ping"),
    ("url-userinfo", "git clone https://deploy:{v}@gitlab.example.com/g/p.git"),
    ("url-userinfo-oauth2", "git push https://oauth2:{v}@gitlab.example.com/g/p.git"),
    ("url-query-private-token", "wget '$CI_SERVER_URL/api/v4/projects?private_token={v}'"),
    ("url-query-access-token", "curl \"$URL?access_token={v}&per_page=1\""),
    ("url-query-secret-id", "curl \"$URL?role_id=ci&secret_id={v}\""),
    ("vault-approle", "vault write auth/approle/login role_id=ci secret_id={v}"),
    ("assign-password", "DB_PASSWORD={v} ./migrate"),
    ("assign-token-quoted", "export API_TOKEN='{v}'"),
    ("assign-secret-double", 'APP_SECRET="{v}"'),
    ("assign-adjacent", "PASSWORD='a'\"{v}\""),
    ("flag-password-eq", "tool --password={v} --verbose"),
    ("flag-token", "gitlab-runner register --token {v} --url $U"),
    ("flag-registration-token", "gitlab-runner register --registration-token {v} --url $U"),
    ("netrc-printf", "printf 'machine gitlab.example.com login ci password {v}\\n' > ~/.netrc"),
    ("comment-pw", "true # temp pw {v}"),
    ("comment-password", "true # password {v}"),
    ("default-shell", 'DB="${{POSTGRES_PASSWORD:-{v}}}"'),
    ("default-shell-eq", 'PW="${{REDIS_PASSWORD:={v}}}"'),
    ("json-password", "echo '{{\"password\": \"{v}\"}}'"),
    ("json-auth", "echo '{{\"auths\":{{\"registry.example.com\":{{\"auth\":\"{v}\"}}}}}}' > config.json"),
    ("yaml-flow-token", "echo '{{token: {v}}}'"),
    ("python-kwarg", "python -c 'requests.get(u, auth=(\"root\", \"{v}\"))'"),
    ("python-cookies", "python -c 'requests.get(u, cookies={{\"_gitlab_session\": \"{v}\"}})'"),
    ("ruby-fetch-default", "ruby -e \"p ENV.fetch('DB_PASSWORD', '{v}')\""),
    ("ruby-or-default", "echo \"gitlab_rails['db_password'] = \\\"#{{ENV['X'] || '{v}'}}\\\"\" >> gitlab.rb"),
    ("node-or-default", "node -e \"const password = process.env.PW || '{v}'\""),
    ("env-line-words", "SMTP_PASSWORD={v} and more words"),
    ("git-extraheader", "git -c http.extraheader='PRIVATE-TOKEN: {v}' fetch"),
    ("psql-url", "psql postgresql://app:{v}@db:5432/app"),
    ("redis-url", "redis-cli -u redis://:{v}@cache:6379"),
    ("amqp-url", "echo amqp://guest:{v}@mq:5672/"),
    ("mongo-url", "mongosh 'mongodb+srv://app:{v}@cluster0.example.net/db'"),
    ("kubectl-literal", "kubectl create secret generic app --from-literal=password={v}"),
    ("helm-set", "helm upgrade app chart --set auth.rootPassword={v}"),
    ("terraform-var", "terraform apply -var 'db_password={v}'"),
    ("docker-run-env", "docker run -e APP_SECRET={v} app"),
    ("build-arg", "docker build --build-arg NPM_TOKEN={v} ."),
    ("form-client-secret", "curl -d 'grant_type=client_credentials&client_secret={v}' $URL"),
    ("json-body-password", "curl -d '{{\"username\":\"ci\",\"password\":\"{v}\"}}' $URL"),
    ("openssl-passin", "openssl pkcs12 -in cert.p12 -passin pass:{v} -nodes"),
    ("aws-configure-secret", "aws configure set aws_secret_access_key {v}"),
    ("npm-config-token", "npm config set _authToken {v}"),
    ("git-config-token", "git config --global gitlab.token {v}"),
    ("mysql-pwd-env", "MYSQL_PWD={v} mysql -uroot"),
    ("pgpassword-env", "PGPASSWORD={v} psql -h db app"),
    ("wget-password", "wget --http-password={v} $URL"),
    ("rsync-password", "RSYNC_PASSWORD={v} rsync -a src/ rsync://ci@host/dst"),
    ("yaml-in-echo", "echo \"api_key: {v}\" >> settings.yml"),
    ("xml-password", "echo '<add key=\"ClearTextPassword\" value=\"{v}\" />' >> nuget.config"),
    ("ldap-bind-flag", "ldapsearch -x -D cn=admin -w {v} -b dc=example"),
    ("registry-auth-env", "export CI_REGISTRY_PASSWORD={v}"),
    ("smtp-settings", "echo \"smtp_password = '{v}'\" >> gitlab.rb"),
]


def forms() -> list[Form]:
    out = [Form(n, t, made(n, p, a, k, *rest)) for n, t, p, a, k, *rest in FORMATTED]
    out += [Form(n, t, weak(n)) for n, t in PLACED]
    return out
