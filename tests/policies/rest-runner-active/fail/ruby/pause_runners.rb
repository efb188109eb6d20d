# frozen_string_literal: true

require "httparty"

API = ENV.fetch("CI_API_V4_URL")
HEADERS = { "PRIVATE-TOKEN" => ENV.fetch("GITLAB_TOKEN") }.freeze

def pause(id)
  # expect: rest-runner-active col=66
  HTTParty.put("#{API}/runners/#{id}", headers: HEADERS, body: { active: false })
end

def resume(id)
  # expect: rest-runner-active col=62
  RestClient.put "#{ENV['CI_API_V4_URL']}/runners/#{id}", { "active" => true }
end
