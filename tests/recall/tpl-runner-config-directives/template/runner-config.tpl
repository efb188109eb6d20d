concurrent = ${jobs}
check_interval = 0

[[runners]]
  name = "${manager_name}"
  url = "${coordinator_url}"
  token = "##TOKEN##"
  executor = "docker+machine"
  [runners.machine]
    IdleCount = ${idle}
%{ if max_builds != 0 ~}
    MaxBuilds = ${max_builds}
%{ endif ~}
    MachineDriver = "amazonec2"
