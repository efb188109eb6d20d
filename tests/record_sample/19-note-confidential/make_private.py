import os

import requests

API = os.environ["CI_API_V4_URL"]
H = {"PRIVATE-TOKEN": os.environ["BOT_TOKEN"]}


def hide_note(project_id, issue_iid, note_id):
    url = f"{API}/projects/{project_id}/issues/{issue_iid}/notes/{note_id}"
    requests.put(url, headers=H, json={"confidential": True}, timeout=30)
