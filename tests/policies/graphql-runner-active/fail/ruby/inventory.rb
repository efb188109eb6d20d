require "httparty"

QUERY = <<~GRAPHQL
  query {
    runners {
      nodes {
        id
        # expect: graphql-runner-active col=9
        active
      }
    }
  }
GRAPHQL

HTTParty.post("#{ENV['CI_SERVER_URL']}/api/graphql", body: { query: QUERY }.to_json)
