import os

import requests

MUTATION = """
mutation($input: RunnerUpdateInput!) {
  # expect: graphql-runner-active col=23
  runnerUpdate(input: $input) { errors }
}
"""
payload = {"input": {"id": "gid://gitlab/Ci::Runner/1", "active": False}}
requests.post(os.environ["CI_API_GRAPHQL_URL"], json={"query": MUTATION, "variables": payload})
