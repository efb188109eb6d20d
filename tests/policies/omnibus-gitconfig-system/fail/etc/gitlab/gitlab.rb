external_url 'https://gitlab.example.com'
# expect: omnibus-gitconfig-system col=19
omnibus_gitconfig['system'] = {
  "fetch" => ["fsckObjects = true"],
  "receive" => ["fsckObjects = true"]
}
