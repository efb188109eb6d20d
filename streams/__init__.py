"""The audit-event stream: GitLab audit events in, downloads tallies and findings out.

Three surfaces share one set of detectors (listed in `streams.detectors.registry`, run by `streams.engine`):
an offline replay over a JSONL file (`streams.replay`), a Faust worker on Kafka (`streams.worker.app`),
and an HTTP receiver compatible with GitLab's audit-event streaming (`streams.receiver`). Nothing
here is imported by `sunset scan`.
"""

# Checked by the `sunset` command (gitlab_sunset.py): the mark of the distribution that installed this package.
DISTRIBUTION = "gitlab-sunset"
