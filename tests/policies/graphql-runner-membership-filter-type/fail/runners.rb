require "httparty"

QUERY = <<~GRAPHQL
  query(
    # expect: graphql-runner-membership-filter-type col=9
    $m: RunnerMembershipFilter!
  ) {
    group(fullPath: "acme") { runners(membership: $m) { nodes { id } } }
  }
GRAPHQL

HTTParty.post("#{ENV['CI_SERVER_URL']}/api/graphql", body: { query: QUERY, variables: { m: "DESCENDANTS" } }.to_json)
