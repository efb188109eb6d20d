require "net/http"
require "uri"

base = ENV.fetch("CI_API_V4_URL")
# expect: rest-reset-registration-token col=19
uri = URI("#{base}/groups/7/runners/reset_registration_token")
request = Net::HTTP::Post.new(uri)
request["PRIVATE-TOKEN"] = ENV.fetch("GITLAB_TOKEN")
Net::HTTP.start(uri.host, uri.port, use_ssl: true) { |http| http.request(request) }
