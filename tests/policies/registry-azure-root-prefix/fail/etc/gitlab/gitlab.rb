registry['storage'] = {
  # expect: registry-azure-root-prefix col=3
  'azure' => {
    'accountname' => 'registry',
    'container' => 'registry',
  }
}
