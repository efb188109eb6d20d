"""sunset: find what GitLab deprecates or removes in your pipelines, settings and API scripts."""

__version__ = "0.1.0"
# Checked by the `sunset` command (gitlab_sunset.py) before it imports anything else from here: another
# distribution that installs a top-level `scanner` does not carry this mark.
DISTRIBUTION = "gitlab-sunset"
