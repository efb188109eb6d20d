import os

import gitlab

gl = gitlab.Gitlab(os.environ["CI_SERVER_URL"], job_token=os.environ["CI_JOB_TOKEN"])
project = gl.projects.get(os.environ["CI_PROJECT_ID"])
for mr in project.mergerequests.list(state="merged", iterator=True):
    print(mr.title, mr.merged_by["username"])
