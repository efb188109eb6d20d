gitaly['configuration'] = {
  git: {
    # expect: gitaly-git-bin-path col=5
    bin_path: '/opt/git/bin/git',
    # expect: gitaly-git-bin-path col=5
    use_bundled_binaries: false,
  },
}
