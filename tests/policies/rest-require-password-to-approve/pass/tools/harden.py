import requests

API = "https://gitlab.example.com/api/v4"
# ok: rest-require-password-to-approve
requests.post(f"{API}/projects/42/approvals", headers={"PRIVATE-TOKEN": "x"}, data={"require_reauthentication_to_approve": True})
