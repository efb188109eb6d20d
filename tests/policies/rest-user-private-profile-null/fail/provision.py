import gitlab

gl = gitlab.Gitlab.from_config("admin")
# expect: rest-user-private-profile-null col=66
gl.users.create({"username": "bot", "email": "bot@example.com", "private_profile": None})
