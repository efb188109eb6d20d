import os

import requests

QUERY = """
query {
  runner(id: "gid://gitlab/Ci::Runner/1") {
    # expect: graphql-runner-active col=5
    active
  }
}
"""
requests.post(os.environ["CI_API_GRAPHQL_URL"], json={"query": QUERY})
