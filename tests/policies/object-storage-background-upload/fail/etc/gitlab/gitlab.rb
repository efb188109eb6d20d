gitlab_rails['lfs_object_store_enabled'] = true
# expect: object-storage-background-upload col=14
gitlab_rails['lfs_object_store_direct_upload'] = false
# expect: object-storage-background-upload col=14
gitlab_rails['lfs_object_store_background_upload'] = true
# expect: object-storage-background-upload col=14
gitlab_rails['artifacts_object_store_background_upload'] = false
