import os

import requests

MUTATION = """
mutation($input: RunnerUpdateInput!) {
  runnerUpdate(input: $input) { errors }
}
"""
requests.post(os.environ["CI_API_GRAPHQL_URL"], json={"query": MUTATION, "variables": {"input": {"paused": True}}})
