gitaly['configuration'] = {
  git: {
    # ok: gitaly-git-bin-path
    catfile_cache_size: 100,
  },
}
