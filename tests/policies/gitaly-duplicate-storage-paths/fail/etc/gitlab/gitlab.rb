gitaly['configuration'] = {
  storage: [
    { name: 'default', path: '/var/opt/gitlab/git-data/repositories' },
    { name: 'nfs', path: '/mnt/nfs/repositories' },
    # expect: gitaly-duplicate-storage-paths col=29
    { name: 'legacy', path: '/var/opt/gitlab/git-data/repositories' },
  ],
}
