gitaly['configuration'] = {
  # ok: omnibus-gitaly-rate-limiting
  concurrency: [
    { rpc: '/gitaly.SSHService/SSHUploadPack', max_per_repo: 5, adaptive: true, min_limit: 1, initial_limit: 5, max_limit: 10 },
  ],
}
