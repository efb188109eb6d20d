external_url 'https://gitlab.example.com'
# ok: omnibus-git-data-dirs
# git_data_dirs({ 'default' => { 'path' => '/mnt/data1' } })
gitaly['configuration'] = {
  storage: [
    { name: 'default', path: '/mnt/data1/repositories' },
  ],
}
gitlab_rails['repositories_storages'] = {
  'default' => { 'gitaly_address' => 'tcp://gitaly1:8075' },
}
