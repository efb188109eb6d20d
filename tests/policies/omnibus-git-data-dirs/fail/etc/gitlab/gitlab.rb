external_url 'https://gitlab.example.com'

# expect: omnibus-git-data-dirs col=1
git_data_dirs({
  'default' => { 'path' => '/mnt/data1', 'gitaly_address' => 'tcp://gitaly1:8075' },
  'gitaly2' => { 'path' => '/mnt/data2', 'gitaly_address' => 'tcp://gitaly2:8075' }
})
