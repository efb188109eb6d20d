pages_external_url "http://pages.example.com"
# ok: pages-inplace-chroot
gitlab_pages['enable'] = true
