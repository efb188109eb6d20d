import gitlab

gl = gitlab.Gitlab.from_config()
note = gl.projects.get(1).issues.get(7).notes.get(1602)
# expect: rest-note-confidential-update col=6
note.confidential = True
note.save()
