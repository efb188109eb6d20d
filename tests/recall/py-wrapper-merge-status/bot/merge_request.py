from . import api


class MergeRequest:
    def __init__(self, client, project_id, iid):
        self._client = client
        self._info = client.call(api.GET(f"/projects/{project_id}/merge_requests/{iid}"))

    @property
    def info(self):
        return self._info

    @property
    def merge_status(self):
        return self.info["merge_status"]

    def ready(self):
        return self.merge_status == "can_be_merged"
