import requests

API = "https://gitlab.example.com/api/v4"
HEADERS = {"PRIVATE-TOKEN": "x"}
# expect: rest-require-password-to-approve col=71
requests.post(f"{API}/projects/42/approvals", headers=HEADERS, data={"require_password_to_approve": True})
