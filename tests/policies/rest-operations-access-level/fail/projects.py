import os

import gitlab

gl = gitlab.Gitlab(os.environ["CI_SERVER_URL"], private_token=os.environ["TOKEN"])
project = gl.projects.get(os.environ["CI_PROJECT_ID"])
# expect: rest-operations-access-level col=9
project.operations_access_level = "private"
project.save()
