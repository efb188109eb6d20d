"""Instance, runner, registry and agent settings: parsers with positions, file recognition, checks.

Every parser here returns the neutral `scanner.core.tree.Tree` (plain data, positions beside it).
None of them executes anything; a construct a parser cannot read becomes a warning in
`Tree.warnings` for that statement, and the rest of the file is still read.
"""
