"""Omnibus `gitlab.rb`: values, exact positions of keys and values in nested hashes and
multi-line statements, and bad statements reported without losing the rest of the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.core.tree import ParseError, Tagged, Tree
from scanner.readers.settings.omnibus import parse_gitlab_rb
from scanner.readers.settings.ruby import tokenize
from scanner.rules.policy import Policy

from conftest import run_scan, where

SOURCE = """\
external_url "https://#{host}.example.com"
gitlab_rails['incoming_email_delivery_method'] = "sidekiq" # trailing comment
# gitlab_rails['service_desk_email_delivery_method'] = "sidekiq"
registry['notifications'] = [
  {
    'name' => 'geo',
    :threshold => 5,
    timeout: '500ms',
    "headers": { "Authorization" => ["Bearer x"] },
  }
]
git_data_dirs({
  'default' => { 'path' => '/mnt/data1' },
})
sidekiq['max_concurrency'] = 10 if ENV['LARGE']
nginx['listen_port'] = ENV.fetch('PORT', 80).to_i
gitaly['configuration'] = { storage: [{ name: 'default', path: '/srv/git' }], pack_objects_cache: { enabled: true } }
roles ['redis_sentinel_role', 'redis_master_role']
postgresql['shared_buffers'] = %w[a b]
patroni['ratio'] = -1.5
"""


def spans(tree: Tree, container: object) -> object:
    return tree.table[id(container)]


@pytest.fixture(scope="module")
def tree() -> Tree:
    return parse_gitlab_rb(SOURCE)


def test_values(tree: Tree) -> None:
    root = tree.roots[0]
    assert root["external_url"] == "https://#{host}.example.com"  # interpolation kept as text
    assert root["gitlab_rails"] == {"incoming_email_delivery_method": "sidekiq"}  # the comment is not read
    assert root["registry"]["notifications"] == [
        {"name": "geo", "threshold": 5, "timeout": "500ms", "headers": {"Authorization": ["Bearer x"]}}
    ]
    assert root["git_data_dirs"] == {"default": {"path": "/mnt/data1"}}
    assert root["sidekiq"] == {"max_concurrency": 10}  # written conditionally: still written
    assert root["nginx"]["listen_port"] == Tagged("!ruby", "ENV.fetch('PORT', 80).to_i")
    assert root["gitaly"]["configuration"]["storage"] == [{"name": "default", "path": "/srv/git"}]
    assert root["roles"] == ["redis_sentinel_role", "redis_master_role"]
    assert root["postgresql"]["shared_buffers"] == ["a", "b"]
    assert root["patroni"]["ratio"] == -1.5
    assert tree.warnings == []
    assert {"incoming_email_delivery_method", "threshold", "Authorization", "storage"} <= tree.keys


def test_positions_of_nested_keys_and_values(tree: Tree) -> None:
    root = tree.roots[0]
    rails = spans(tree, root["gitlab_rails"])
    assert rails["incoming_email_delivery_method"] == ((2, 14, 2, 46), (2, 50, 2, 59))
    entry = root["registry"]["notifications"][0]
    assert spans(tree, root["registry"]["notifications"]) == [(5, 3, 10, 4)]
    assert spans(tree, entry)["name"] == ((6, 5, 6, 11), (6, 15, 6, 20))
    assert spans(tree, entry)["threshold"] == ((7, 5, 7, 15), (7, 19, 7, 20))  # a symbol key
    assert spans(tree, entry)["timeout"] == ((8, 5, 8, 12), (8, 14, 8, 21))  # `key:`, without the colon
    assert spans(tree, entry)["headers"] == ((9, 5, 9, 14), (9, 16, 9, 51))  # `"key":`
    headers = entry["headers"]
    assert spans(tree, headers)["Authorization"] == ((9, 18, 9, 33), (9, 37, 9, 49))


def test_positions_of_multi_line_values_and_method_calls(tree: Tree) -> None:
    root = tree.roots[0]
    top = spans(tree, root)
    assert top["external_url"] == ((1, 1, 1, 13), (1, 14, 1, 43))
    assert top["git_data_dirs"] == ((12, 1, 12, 14), (12, 15, 14, 2))  # the hash, over three lines
    assert spans(tree, root["registry"])["notifications"] == ((4, 10, 4, 25), (4, 29, 11, 2))
    assert spans(tree, root["sidekiq"])["max_concurrency"] == ((15, 9, 15, 26), (15, 30, 15, 32))
    storage = root["gitaly"]["configuration"]["storage"]
    assert spans(tree, storage[0])["path"] == ((17, 58, 17, 62), (17, 64, 17, 74))


def test_a_later_assignment_wins_and_nested_assignments_merge() -> None:
    tree = parse_gitlab_rb("x['a']['b'] = 1\nx['a']['c'] = 2\nx['a']['b'] = 3\n")
    assert tree.roots[0] == {"x": {"a": {"b": 3, "c": 2}}}
    assert tree.table[id(tree.roots[0]["x"]["a"])]["b"] == ((3, 8, 3, 11), (3, 15, 3, 16))


def test_control_lines_and_local_variables_are_skipped_silently() -> None:
    text = (
        "unless ENV['X'].nil?\n"
        "  [gitlab_rails['env'], registry['env']].each do |env|\n"
        "    env['AWS_REGION'] = ENV['AWS_REGION']\n"
        "  end\n"
        "end\n"
        "host = `hostname`.strip\n"
        "eval ENV['GITLAB_OMNIBUS_CONFIG'].to_s\n"
        "from_file('/etc/gitlab/gitlab.rb') if File.exist?('/etc/gitlab/gitlab.rb')\n"
        "=begin\n"
        "gitlab_rails['ignored'] = true\n"
        "=end\n"
        "gitlab_rails['time_zone'] = 'UTC'\n"
    )
    tree = parse_gitlab_rb(text)
    assert tree.warnings == []
    assert tree.roots[0]["gitlab_rails"] == {"time_zone": "UTC"}
    assert "eval" not in tree.roots[0] and "host" not in tree.roots[0]


def test_an_unterminated_hash_is_a_warning_and_the_rest_is_read() -> None:
    text = "gitlab_rails['env'] = {\n  'A' => 1,\nsidekiq['min_concurrency'] = 5\nnginx['enable'] = false\n"
    tree = parse_gitlab_rb(text)
    assert tree.warnings == [(1, "`{` opened here is never closed; this statement is not read")]
    assert tree.roots[0] == {"sidekiq": {"min_concurrency": 5}, "nginx": {"enable": False}}


def test_heredocs_unterminated_strings_and_dynamic_keys_are_warnings() -> None:
    text = (
        "nginx['custom_gitlab_server_config'] = <<~CONF\n"
        "  location /x { return 404; }\n"
        "CONF\n"
        "gitlab_rails['ldap_servers'] = \"main: \n"
        "gitlab_rails[key] = 1\n"
        "registry['enable'] = true\n"
    )
    tree = parse_gitlab_rb(text)
    assert tree.warnings == [
        (1, "a heredoc is not read; this statement is skipped"),
        (4, "unterminated string; the rest of this line is not read"),
        (5, "setting not read: the key of `gitlab_rails[…]` is not a literal string or symbol"),
    ]
    assert tree.roots[0] == {"registry": {"enable": True}}


def test_a_file_with_nothing_readable_is_a_parse_error() -> None:
    with pytest.raises(ParseError) as err:
        parse_gitlab_rb("gitlab_rails['x'] = {\n")
    assert err.value.line == 1


def test_tokens_keep_their_spans() -> None:
    tokens, warnings = tokenize("x['a'] = :sym # c\n")
    assert warnings == []
    assert [(t.kind, t.text, t.span) for t in tokens] == [
        ("ident", "x", (1, 1, 1, 2)),
        ("punct", "[", (1, 2, 1, 3)),
        ("string", "'a'", (1, 3, 1, 6)),
        ("punct", "]", (1, 6, 1, 7)),
        ("punct", "=", (1, 8, 1, 9)),
        ("symbol", ":sym", (1, 10, 1, 14)),
        ("newline", "\n", (1, 18, 2, 1)),
    ]


def test_bad_gitlab_rb_files_are_input_errors_and_the_scan_goes_on(tmp_path: Path, policies: list[Policy]) -> None:
    (tmp_path / "binary").mkdir()
    (tmp_path / "binary" / "gitlab.rb").write_bytes(b"external_url 'x'\ngitlab_rails['a'] = 1\n\x00\x01\x02")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "gitlab.rb").write_text(
        "gitlab_rails['env'] = {\n  'A' => 1,\ngit_data_dirs({ 'default' => { 'path' => '/x' } })\n"
    )
    report = run_scan([tmp_path], policies)
    assert [(e.path, e.line, e.message) for e in report.errors] == [
        ("binary/gitlab.rb", None, "binary file (contains NUL bytes); not scanned"),
        ("broken/gitlab.rb", 1, "`{` opened here is never closed; this statement is not read"),
    ]
    assert where(report) == {("omnibus-git-data-dirs", "broken/gitlab.rb", 3, 1)}
