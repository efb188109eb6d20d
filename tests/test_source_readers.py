"""The JavaScript/TypeScript, Ruby and Terraform readers: no text makes them fail or place a call
outside the file, and crafted input is read in work linear in its length."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner.core.document import Document
from scanner.core.tree import Tree
from scanner.readers.api import javascript, ruby, terraform
from scanner.readers.api.model import GraphqlText, RestCall
from scanner.rules.facets import Facets

from conftest import examples

Extract = Callable[[str], Sequence[RestCall | GraphqlText]]
READERS: dict[str, Extract] = {"javascript": javascript.extract, "ruby": ruby.extract,
                               "terraform": terraform.extract}

_PIECES = {
    "javascript": ["fetch(", "axios.get(", "axios.put(", "`${API}/api/v4/runners/${id}`", "'/api/v4/projects/1'",
                   "const API = ", "{method: 'PUT', body: JSON.stringify({active: false})}", "gql`", "query { a }",
                   "variables: {input: {x: 1}}", "query: ", "(", ")", "{", "}", "[", "]", ",", ":", "//", "/*", "*/",
                   "/re[/]/g", "`", "'", '"', "\\", "${", "\n", " ", "+", "=", ";", "'PRIVATE-TOKEN'",
                   "async request<T>(path: string): Promise<T> {", "fetch(`${this.base}${path}`)", "this.request(",
                   "'/projects/1/merge_requests/2/changes'", "const gl = async (p) => {", "fetch(b + p)", "gl(",
                   "<T>", ": Promise<{ a: string }[]>", "=>"],
    "ruby": ["HTTParty.put(", "Net::HTTP::Put.new(", '"#{ENV["CI_API_V4_URL"]}/runners/1"', "URI(", "uri = ",
             "body: {active: false}", "{\"active\" => false}", "Gitlab.update_runner(42, active: false)",
             "client = Gitlab.client()", "<<~GQL\n", "query { runner { id } }\n", "GQL\n", "=begin\n", "=end\n",
             "#{", "#", "(", ")", "{", "}", "'", '"', "\\", "\n", " ", ",", ":", "=>", "x.get "],
    "terraform": ['resource "gitlab_runner" "r" {\n', 'resource "gitlab_group" "g" {\n', "}\n", "{", "}",
                  "token = ", '"x"', "true", "null", "#", "//", "/*", "*/", '"', "\\", "\n", " ", "= ", "=="],
}


def _inside(text: str, line: int, column: int) -> bool:
    lines = text.split("\n")
    return 1 <= line <= len(lines) and 1 <= column <= len(lines[line - 1]) + 1


@pytest.mark.parametrize("reader", sorted(READERS))
@settings(derandomize=True, deadline=None, max_examples=examples(200),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_any_text_gives_calls_inside_it(reader: str, data: st.DataObject) -> None:
    text = data.draw(st.one_of(st.text(max_size=200),
                               st.lists(st.sampled_from(_PIECES[reader]), max_size=60).map("".join)))
    text = "/api/v4 graphql Gitlab. resource \"gitlab_\n" + text
    for use in READERS[reader](text):
        if isinstance(use, RestCall):
            spans = [use.span, *(p.span for p in use.params), *(r.span for r in use.reads)]
            assert all(_inside(text, s[0], s[1]) for s in spans), use
        else:
            assert all(_inside(text, line, col) for line, col in use.positions), use


BUDGET = 5.0  # seconds of CPU time: bounds the work, does not measure speed (bench/ does)
FAMILIES: dict[str, tuple[str, str]] = {
    "js: a finding line repeated": (
        "javascript", 'fetch(`${API}/api/v4/runners/1`, {method: "PUT", body: JSON.stringify({active: false})});\n'
        * 8_000),
    "js: comments": ("javascript", "// /api/v4\n" * 100_000),
    "js: nested calls": ("javascript", "axios.get('/api/v4/x' + " * 3_000 + "1" + ")" * 3_000),
    "js: calls never closed": ("javascript", "axios.get('/api/v4/runners', {a: 1,\n" * 5_000),
    "js: template interpolations never closed": ("javascript", "`${'/api/v4'\n" * 20_000),
    "js: variables objects": ("javascript", "gql(x, {query: 'query { a }', variables: {" * 3_000),
    "js: consts on one line": ("javascript", "const A = '/api/v4'; " * 20_000),
    "js: request helpers nested": ("javascript", "'PRIVATE-TOKEN'; " + "function f(p) { fetch(`${b}${p}`); g(p); "
                                   * 5_000 + "}" * 5_000),
    "js: request helper calls on one line": ("javascript", "'PRIVATE-TOKEN'; r(p) { fetch(b + p) } "
                                             + "this.r<T>('/projects/1/merge_requests/2/changes'); " * 10_000),
    "js: generics never closed": ("javascript", "'PRIVATE-TOKEN'; " + "f<a.b, c[] " * 20_000),
    "rb: a finding line repeated": (
        "ruby", 'HTTParty.put("#{ENV["CI_API_V4_URL"]}/runners/1", body: {active: false})\n' * 10_000),
    "rb: heredoc lines with open interpolations": ("ruby", "q = <<~GQL\n" + "  #{query /api/v4\n" * 20_000
                                                   + "GQL\n"),
    "rb: calls never closed": ("ruby", "HTTParty.get('/api/v4/runners', {a: 1,\n" * 5_000),
    "rb: calls on one line": ("ruby", "x.get '/api/v4/runners', " * 5_000 + "\n"),
    "rb: assignments on one line": ("ruby", "u = '/api/v4/x'; " * 10_000 + "\n"),
    "tf: resources never closed": ("terraform", 'resource "gitlab_runner" "r" {\n  token = "x"\n' * 10_000),
    "tf: resources on one line": ("terraform", 'resource "gitlab_group" "g" { name = "x" } ' * 10_000 + "\n"),
    "tf: comments in blocks": ("terraform", 'resource "gitlab_group" "g" {\n' + "# }\n" * 50_000 + "}\n"),
}


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_crafted_source_is_read_in_bounded_work(family: str) -> None:
    reader, text = FAMILIES[family]
    start = time.process_time()
    READERS[reader](text)
    assert time.process_time() - start < BUDGET


@settings(derandomize=True, deadline=None, max_examples=examples(200))
@given(body=st.text(st.characters(blacklist_characters="'\"\\#\n", blacklist_categories=["Cs"]), max_size=200),
       quote=st.sampled_from(["'", '"']))
def test_a_ruby_literal_without_escapes_is_its_own_value_at_its_own_offsets(body: str, quote: str) -> None:
    """The lexer takes a literal's plain characters a run at a time: each keeps its own offset."""
    text = f"x = {quote}{body}{quote} + {quote}#{{y}}{body}\\n{quote}\n"
    first, second = [t for t in ruby.lex(text) if t.kind == "str"]
    assert (first.start, first.end, first.value, list(first.offsets)) == (
        4, 6 + len(body), body, list(range(5, 5 + len(body))))
    at = first.end + 4  # the second literal's first character
    newline = "\n" if quote == '"' else "\\n"
    interpolation = "\0\0\0\0" if quote == '"' else "#{y}"
    assert (second.value, list(second.offsets)) == (
        interpolation + body + newline,
        list(range(at, at + 4 + len(body))) + [at + 4 + len(body)] * len(newline))


@settings(derandomize=True, deadline=None, max_examples=examples(200),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(pieces=st.lists(st.sampled_from([p for p in _PIECES["ruby"] if "\r" not in p]), max_size=60))
def test_a_ruby_file_with_lone_crs_reads_as_with_lfs(pieces: list[str]) -> None:
    """A lone CR ends a line (the one line model): a source's calls are the same at the same places."""
    def calls(text: str) -> list[object]:
        doc = Document("x.rb", Path("x.rb"), "ruby-source", text, Tree([], []))
        return [use for _, use in Facets(doc, None, ruby.extract, lambda _: None).calls]

    text = "/api/v4 Gitlab.\n" + "".join(pieces)
    assert calls(text.replace("\n", "\r")) == calls(text)
