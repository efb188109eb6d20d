import gitlab

gl = gitlab.Gitlab.from_config("admin")
# expect: rest-geo-nodes col=25
for node in gl.geonodes.list():
    print(node.url)
