# ok: object-storage-background-upload
gitlab_rails['lfs_object_store_enabled'] = true
# ok: object-storage-background-upload
gitlab_rails['lfs_object_store_proxy_download'] = false
gitlab_rails['object_store']['enabled'] = true
