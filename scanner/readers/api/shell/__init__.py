"""GitLab API calls read from shell scripts: HTTP client commands (`clients`), which call a
command's output comes from and where it goes (`flow`), and jq filters reading responses (`jq`)."""
