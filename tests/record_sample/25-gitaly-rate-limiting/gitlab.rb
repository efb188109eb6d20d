gitaly['configuration'] = {
  concurrency: [
    { rpc: '/gitaly.SmartHTTPService/PostUploadPackWithSidechannel', max_per_repo: 20 },
  ],
  rate_limiting: [
    { rpc: '/gitaly.SSHService/SSHUploadPack', interval: '1m', burst: 10 },
  ],
}
