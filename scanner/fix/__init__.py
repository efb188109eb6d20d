"""`sunset fix`: rewrite what a policy says can be rewritten, and leave every other byte alone.

How a fix is made, and why this way:

* A policy declares its fix as data (`fix:` in its YAML; the kinds are the closed set in
  `scanner.rules.fixes.FIX_SPECS`). A fix works on a reported finding: the route and the exact span
  the parser recorded for it (`scanner.fix.sites`).
* Every rewrite is a span edit on the file's text (`scanner.fix.plan`), for YAML as for TOML,
  `gitlab.rb`, shell, Python or GraphQL. ruamel.yaml's round-trip *dumper* keeps comments and
  quoting but still re-indents, re-wraps long lines and re-flows collections, so it cannot keep
  "every other byte unchanged"; it is not used to write.
* Each rewritten file is verified before it is written (`scanner.fix.verify`): the file's own
  parser must still read it, YAML must load with ruamel's round-trip loader and TOML with
  `tomllib`, and the loaded data must differ from the original exactly as the fix intends (a key
  renamed, an entry deleted, a scalar's words replaced). A fix that fails is refused and reported;
  the rest of the file's fixes still apply.
* Files are written atomically (`scanner.fix.apply`): a temporary file beside the original, its
  mode copied, then `os.replace`.
"""
