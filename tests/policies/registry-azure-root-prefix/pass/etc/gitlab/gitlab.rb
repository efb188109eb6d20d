registry['storage'] = {
  # ok: registry-azure-root-prefix
  'azure' => {
    'accountname' => 'registry',
    'container' => 'registry',
    'legacyrootprefix' => true,
  }
}
