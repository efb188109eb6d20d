gitaly['configuration'] = {
  listen_addr: '0.0.0.0:8075',
  concurrency: [
    { rpc: '/gitaly.SmartHTTPService/PostReceivePack', max_per_repo: 20 },
  ],
  # expect: omnibus-gitaly-rate-limiting col=3
  rate_limiting: [
    { rpc: '/gitaly.SSHService/SSHUploadPack', interval: '1m', burst: 5 },
  ],
}
