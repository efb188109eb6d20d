import gitlab

gl = gitlab.Gitlab.from_config()
for repository in gl.projects.get(1).repositories.list():
    # expect: rest-registry-tags-offset-pagination col=37
    for tag in repository.tags.list(get_all=True):
        print(tag.name)
