registry['storage'] = {
  's3' => {
    'bucket' => 'registry',
    # ok: registry-s3-signature-v2
    'v4auth' => true,
  }
}
