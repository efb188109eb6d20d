"""Omnibus `gitlab.rb`: the settings it assigns, as one mapping with positions; nothing is executed.

Read as settings:

* `gitlab_rails['a'] = v` and nested `registry['storage']['s3'] = v` (also `||=`), becoming
  `{"gitlab_rails": {"a": v}}`; a later assignment wins, as it does when Chef reads the file;
* method-call settings, `external_url 'https://…'` and `git_data_dirs({...})`, becoming
  `{"external_url": "https://…"}`; several arguments become a list;
* a trailing `if`/`unless` modifier is ignored: a setting written conditionally is still written.

Control lines (`if`, `end`, `each do |x|`), local variables (`host = …`) and calls that set
nothing (`from_file`, `eval`) are skipped silently. A heredoc, a key that is not a literal, or a
bracket never closed is a warning for that statement only.
"""

from __future__ import annotations

from typing import Any

from scanner.core.tree import ParseError, Span, Tagged, Tree
from scanner.readers.settings.ruby import Tok, tokenize
from scanner.readers.settings.rubyvalues import Unreadable, Values, adjacent, statements

_CONTROL = frozenset(
    [
        "if",
        "unless",
        "else",
        "elsif",
        "end",
        "case",
        "when",
        "while",
        "until",
        "for",
        "begin",
        "rescue",
        "ensure",
        "def",
        "class",
        "module",
        "do",
        "then",
        "return",
        "raise",
        "break",
        "next",
        "redo",
        "retry",
        "yield",
        "super",
        "self",
        "not",
        "and",
        "or",
        "alias",
        "undef",
        "loop",
        "__END__",
        "require",
        "require_relative",
        "load",
        "include",
        "extend",
        "puts",
        "print",
        "p",
        "pp",
        "eval",
        "instance_eval",
        "from_file",
        "exit",
        "sleep",
        "system",
        "exec",
        "abort",
        "warn",
    ]
)
_MODIFIERS = frozenset(("if", "unless", "while", "until", "rescue"))
_ASSIGN = frozenset(("=", "||="))
_UPDATE = frozenset(("+=", "-=", "*=", "|=", "&=", "<<", "<<="))


class _Builder:
    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.root: dict[str, Any] = {}
        self.tree = Tree(roots=[self.root], root_spans=[(1, 1, len(self.lines), 1)])
        self.tree.table[id(self.root)] = {}
        self.read = 0

    def statement(self, toks: list[Tok]) -> None:
        head = toks[0]
        if head.kind == "heredoc" or any(t.kind == "heredoc" for t in toks):
            self.warn(head, "a heredoc is not read; this statement is skipped")
            return
        if any(t.kind == "error" for t in toks):
            return  # the lexer has reported it
        if head.kind != "ident" or head.text in _CONTROL:
            return
        toks = _without_modifier(toks)
        try:
            if len(toks) > 1 and toks[1].text == "[" and adjacent(head, toks[1]):
                self.assignment(toks)
            elif len(toks) > 1 and not (toks[1].kind == "punct" and toks[1].text in ("=", "||=", ".", "&.", "::")):
                self.call(toks)
        except Unreadable as exc:
            self.warn(head, f"setting not read: {exc}")
        except IndexError:
            self.warn(head, "setting not read: it ends too early")

    def assignment(self, toks: list[Tok]) -> None:
        keys: list[tuple[str, Span]] = []
        j = 1
        while j < len(toks) and toks[j].text == "[" and adjacent(toks[j - 1], toks[j]):
            literal = toks[j + 1]
            if literal.kind not in ("string", "symbol") or toks[j + 2].text != "]":
                raise Unreadable(f"the key of `{toks[0].text}[…]` is not a literal string or symbol")
            keys.append((str(literal.value), literal.span))
            j += 3
        if j >= len(toks) or toks[j].kind != "punct" or toks[j].text not in _ASSIGN | _UPDATE:
            return  # reads the setting (`x['a'].merge!(...)`), sets nothing we can see
        values = Values(toks[j + 1 :], self.lines, self.tree.table, self.tree.keys)
        if toks[j].text in _UPDATE:
            value, span = values.expr()
            value = Tagged("!ruby", values.source(span))
        else:
            value, span = values.expr()
        container = self.child(self.root, toks[0].text, toks[0].span, _stmt_span(toks))
        for key, key_span in keys[:-1]:
            container = self.child(container, key, key_span, _stmt_span(toks))
        self.set(container, keys[-1][0], keys[-1][1], value, span)

    def call(self, toks: list[Tok]) -> None:
        args = toks[1:]
        if args[0].text == "(" and adjacent(toks[0], args[0]) and args[-1].text == ")":
            args = args[1:-1]
        if not args:
            return
        values = Values(args, self.lines, self.tree.table, self.tree.keys)
        items: list[Any] = []
        spans: list[Span] = []
        while values.at() is not None:
            value, span = values.expr(frozenset({","}))
            items.append(value)
            spans.append(span)
            if values.is_punct(","):
                values.i += 1
        if len(items) == 1:
            self.set(self.root, toks[0].text, toks[0].span, items[0], spans[0])
            return
        self.tree.table[id(items)] = spans
        self.set(self.root, toks[0].text, toks[0].span, items, (spans[0][0], spans[0][1], spans[-1][2], spans[-1][3]))

    def child(self, parent: dict[str, Any], key: str, key_span: Span, stmt: Span) -> dict[str, Any]:
        """The mapping under `key`, created as Omnibus's attribute mash would be."""
        value = parent.get(key)
        if not isinstance(value, dict):
            value = {}
            self.tree.table[id(value)] = {}
            self.set(parent, key, key_span, value, stmt)
        return value

    def set(self, parent: dict[str, Any], key: str, key_span: Span, value: Any, span: Span) -> None:
        parent[key] = value
        self.tree.table[id(parent)][key] = (key_span, span)
        self.tree.keys.add(key)
        self.read += 1

    def warn(self, tok: Tok, message: str) -> None:
        self.tree.warnings.append((tok.span[0], message))


def _without_modifier(toks: list[Tok]) -> list[Tok]:
    """`setting = value if cond`: the setting without its condition."""
    depth = 0
    for i, tok in enumerate(toks):
        if tok.kind == "punct" and tok.text in "([{":
            depth += 1
        elif tok.kind == "punct" and tok.text in ")]}":
            depth -= 1
        elif depth == 0 and i > 0 and tok.kind == "ident" and tok.text in _MODIFIERS:
            return toks[:i]
    return toks


def _stmt_span(toks: list[Tok]) -> Span:
    return (toks[0].span[0], toks[0].span[1], toks[-1].span[2], toks[-1].span[3])


def parse_gitlab_rb(text: str) -> Tree:
    """Every setting a `gitlab.rb` assigns; unreadable statements become `Tree.warnings`."""
    tokens, lex_warnings = tokenize(text)
    builder = _Builder(text)
    warnings: list[tuple[int, str]] = list(lex_warnings)
    for stmt in statements(tokens, warnings):
        builder.statement(stmt)
    builder.tree.warnings.extend(warnings)
    builder.tree.warnings.sort()
    if builder.read == 0 and builder.tree.warnings:
        line, message = builder.tree.warnings[0]
        raise ParseError(f"no setting could be read: {message}", line)
    return builder.tree
