import os

import requests

QUERY = """
query {
  project(fullPath: "acme/app") {
    # expect: graphql-iteration-state-started col=23
    iterations(state: started) { nodes { id } }
  }
}
"""
requests.post(os.environ["CI_API_GRAPHQL_URL"], json={"query": QUERY}, timeout=30)
