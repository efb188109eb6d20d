gitaly['configuration'] = {
  storage: [
    # ok: gitaly-duplicate-storage-paths
    { name: 'default', path: '/var/opt/gitlab/git-data/repositories' },
    # ok: gitaly-duplicate-storage-paths
    { name: 'nfs', path: '/mnt/nfs/repositories' },
  ],
}
