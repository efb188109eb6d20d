require "gitlab"

client = Gitlab::Client.new(endpoint: ENV.fetch("GITLAB_API_ENDPOINT"), private_token: ENV.fetch("GITLAB_TOKEN"))
# expect: rest-mr-changes-endpoint col=8
client.merge_request_changes(ENV.fetch("CI_PROJECT_ID"), ENV.fetch("CI_MERGE_REQUEST_IID")).changes.each do |change|
  puts change["new_path"]
end
