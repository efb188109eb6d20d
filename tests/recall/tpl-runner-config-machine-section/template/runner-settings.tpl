concurrent = ${max_jobs}

[[runners]]
  name = "${runner_name}"
  url = "${coordinator_url}"
  token = "${runner_token}"
  executor = "${executor_kind}"
  [runners.docker]
    image = "${default_image}"
  [runners.machine]
    IdleCount = ${idle_machines}
    MachineDriver = "amazonec2"
    MachineName = "worker-%s"
