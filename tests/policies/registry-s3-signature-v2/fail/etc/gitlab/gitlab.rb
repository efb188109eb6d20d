registry['storage'] = {
  's3' => {
    'bucket' => 'registry',
    'regionendpoint' => 'https://minio.example.com',
    # expect: registry-s3-signature-v2 col=5
    'v4auth' => false,
  }
}
