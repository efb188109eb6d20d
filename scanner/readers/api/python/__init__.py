"""GitLab API calls read from Python source: the walk (`extract`), what values it follows
(`values`), python-gitlab's managers and their REST paths (`managers`), parsing and positions
(`source`)."""
