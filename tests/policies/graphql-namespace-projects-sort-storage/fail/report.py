import os

import requests

QUERY = """
query {
  group(fullPath: "acme") {
    # expect: graphql-namespace-projects-sort-storage col=20
    projects(sort: STORAGE) { nodes { fullPath } }
  }
}
"""
requests.post(os.environ["CI_API_GRAPHQL_URL"], json={"query": QUERY}, timeout=30)
