import requests

API = "https://gitlab.example.com/api/v4"
# expect: rest-require-password-to-approve col=86
requests.post(f"{API}/projects/42/approvals", headers={"PRIVATE-TOKEN": "x"}, data={"require_password_to_approve": True})
