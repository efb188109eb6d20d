import gitlab

gl = gitlab.Gitlab.from_config()
# expect: rest-users-offset-pagination col=27
for user in gl.users.list(get_all=True):
    print(user.username)
