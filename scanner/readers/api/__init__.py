"""GitLab API usage: REST v4 calls and GraphQL documents found in scripts and source code.

Extractors turn text into neutral records (`scanner.readers.api.model`): a REST call with its method,
path, request fields and the response fields read from its result; a GraphQL document with
the source position of each of its characters. The `rest-api` and `graphql` matchers only
ever see those records, so a policy is written once for every language sunset reads.

Nothing here is imported by the package itself: each module is imported where it is used,
and graphql-core only when a GraphQL document is actually parsed.
"""
