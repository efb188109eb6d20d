[[runners]]
  name = "\"${WORKER_NAME}\""
  url = "\"${WORKER_URL}\""
  token = "\"${WORKER_TOKEN}\""
  executor = "\"docker+machine\""
  [runners.docker]
    image = "\"debian:stable\""
  [runners.machine]
    IdleTime = ${WORKER_IDLE}
    MachineDriver = "\"google\""
