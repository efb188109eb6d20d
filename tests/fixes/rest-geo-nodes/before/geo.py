import os

import requests

API = os.environ["CI_API_V4_URL"]

for site in requests.get(f"{API}/geo_nodes", headers={"PRIVATE-TOKEN": os.environ["GEO_TOKEN"]}).json():
    print(site["name"])
