import os
from pathlib import Path

import requests

API = os.environ["CI_API_V4_URL"]
# expect: rest-ci-lint-global col=22
requests.post(f"{API}/ci/lint", json={"content": Path(".gitlab-ci.yml").read_text()}, timeout=30)
