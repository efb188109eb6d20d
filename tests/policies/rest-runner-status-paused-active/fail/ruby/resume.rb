require "gitlab"

Gitlab.configure do |config|
  config.endpoint = ENV.fetch("GITLAB_API_ENDPOINT")
  config.private_token = ENV.fetch("GITLAB_TOKEN")
end

# expect: rest-runner-status-paused-active col=16
Gitlab.runners(status: "paused").each { |runner| puts runner.id }
