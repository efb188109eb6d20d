"""sunset: find what GitLab deprecates or removes in your pipelines, settings and API scripts."""

__version__ = "0.1.0"
