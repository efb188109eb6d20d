import requests

API = "https://gitlab.example.com/api/v4"
HEADERS = {"PRIVATE-TOKEN": "x"}
# ok: rest-require-password-to-approve
requests.post(f"{API}/projects/42/approvals", headers=HEADERS, data={"require_reauthentication_to_approve": True})
