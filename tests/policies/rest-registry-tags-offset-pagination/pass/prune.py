import gitlab

gl = gitlab.Gitlab.from_config()
for repository in gl.projects.get(1).repositories.list():
    # ok: rest-registry-tags-offset-pagination
    for tag in repository.tags.list(iterator=True, pagination="keyset"):
        print(tag.name)
