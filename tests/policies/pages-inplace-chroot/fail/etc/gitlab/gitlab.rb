pages_external_url "http://pages.example.com"
gitlab_pages['enable'] = true
# expect: pages-inplace-chroot col=14
gitlab_pages['inplace_chroot'] = true
