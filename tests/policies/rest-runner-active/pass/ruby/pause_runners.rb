require "httparty"

API = ENV.fetch("CI_API_V4_URL")

# HTTParty.put("#{API}/runners/1", body: { active: false }) -- a comment is not a call
def pause(id)
  HTTParty.put("#{API}/runners/#{id}", body: { paused: true }, headers: { "active" => "header, not a field" })
end

puts "PUT #{API}/runners/1 with active=false"
