import os

import requests

QUERY = """
query {
  runnerPlatforms {
    nodes { name humanReadableName architectures { nodes { name } } }
  }
}
"""

resp = requests.post(f"{os.environ['GITLAB_URL']}/api/graphql", json={"query": QUERY}, timeout=30)
print(resp.json())
