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
    OffPeakTimezone = "${off_peak_timezone}"
    OffPeakIdleCount = ${off_peak_idle}
%{ if off_peak_periods != "" ~}
    OffPeakPeriods = ${off_peak_periods}
%{ endif ~}
