registry['storage'] = {
  # ok: registry-swift-oss-storage
  's3' => { 'bucket' => 'registry', 'regionendpoint' => 'https://swift-s3.example.com' }
}
