"""What a settings document sets in the environment and which commands it runs, as routes.

Environment variables: env files; Dockerfile `ENV`/`ARG`; compose `environment:` (a mapping or
`NAME=value` items); Kubernetes `env:` of every container; the runner chart's `envVars:`.

Commands, split into positioned words: Dockerfile `RUN` (shell form as written, exec form item
by item), `CMD`/`ENTRYPOINT`; compose `command:`/`entrypoint:`; Kubernetes `command:`/`args:`.
When only arguments are given, the image decides the program: arguments to the
`gitlab/gitlab-runner` image are arguments to `gitlab-runner` (its entrypoint), so
`command: ["register", "--registration-token", …]` is a `gitlab-runner register` call.
`sh -c "…"` runs its script, which is split like any shell script.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from scanner.core.document import Document, Part
from scanner.core.results import Route
from scanner.core.tree import Span
from scanner.readers.ci import ScriptItem
from scanner.readers.shell import ScriptText, Token, commands, map_lines

_SHELLS = frozenset(("sh", "bash", "ash", "dash", "zsh", "/bin/sh", "/bin/bash", "/bin/ash", "/usr/bin/env"))


@dataclass(frozen=True, slots=True)
class EnvVar:
    name: str
    value: Any
    route: Route
    part: Part
    span: Span | None = None


Commands = dict[Route, list[tuple[list[Token], ScriptItem]]]


def env_vars(doc: Document) -> Iterator[EnvVar]:
    for n, root in enumerate(doc.data.roots):
        if doc.kind == "env-file" and isinstance(root, dict):
            yield from (EnvVar(k, v, (n, k), "key") for k, v in root.items())
        elif doc.kind == "dockerfile" and isinstance(root, list):
            for i, item in enumerate(root):
                for kw in ("ENV", "ARG"):
                    if isinstance(item.get(kw), dict):
                        yield from (EnvVar(k, v, (n, i, kw, k), "key") for k, v in item[kw].items())
        elif doc.kind == "compose" and isinstance(root, dict):
            for route, service in _services(root, n):
                yield from _environment(doc, service.get("environment"), route + ("environment",))
        elif doc.kind == "k8s-manifest":
            for route, container in containers(root, (n,)):
                yield from _env_list(container.get("env"), route + ("env",))
        elif doc.kind == "helm-values" and isinstance(root, dict):
            yield from _env_list(root.get("envVars"), (n, "envVars"))


def _services(root: dict[str, Any], n: int) -> Iterator[tuple[Route, dict[str, Any]]]:
    services = root.get("services")
    if isinstance(services, dict):
        for name, body in services.items():
            if isinstance(body, dict):
                yield (n, "services", name), body


def _environment(doc: Document, env: Any, route: Route) -> Iterator[EnvVar]:
    if isinstance(env, dict):
        yield from (EnvVar(str(k), v, route + (k,), "key") for k, v in env.items())
    elif isinstance(env, list):
        for i, item in enumerate(env):
            if isinstance(item, str):
                name, _, value = item.partition("=")
                line, col, _, _ = doc.span(route + (i,), "value")
                col += 1 if doc.line_text(line)[col - 1 : col] in "'\"" else 0
                yield EnvVar(
                    name, value if "=" in item else None, route + (i,), "value", (line, col, line, col + len(name))
                )


def _env_list(env: Any, route: Route) -> Iterator[EnvVar]:
    if isinstance(env, list):
        for i, item in enumerate(env):
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                yield EnvVar(item["name"], item.get("value", item.get("valueFrom")), route + (i, "name"), "value")


def containers(value: Any, route: Route, depth: int = 0) -> Iterator[tuple[Route, dict[str, Any]]]:
    """Every container of a manifest (Pod, Deployment, Job, CronJob …): lists named
    `containers`/`initContainers` whose items have an `image`; manifests that hold others in a
    list (a `kind: List`'s `items`, an OpenShift `Template`'s `objects`) are read through."""
    if depth > 12 or not isinstance(value, dict):
        return
    for key, child in value.items():
        if key in ("containers", "initContainers") and isinstance(child, list):
            for i, item in enumerate(child):
                if isinstance(item, dict) and "image" in item:
                    yield route + (key, i), item
        elif key in ("items", "objects") and isinstance(child, list) and "kind" in value:
            for i, item in enumerate(child):
                yield from containers(item, route + (key, i), depth + 1)
        elif isinstance(child, dict):
            yield from containers(child, route + (key,), depth + 1)


def command_lines(doc: Document, programs: frozenset[str]) -> Commands:
    """Commands run by the document, grouped by the container (or file) that runs them."""
    out: Commands = {}
    for n, root in enumerate(doc.data.roots):
        if doc.kind == "dockerfile" and isinstance(root, list):
            _dockerfile(doc, root, n, programs, out)
        elif doc.kind == "compose" and isinstance(root, dict):
            for route, service in _services(root, n):
                _invocation(doc, service, route, ("entrypoint", "command"), "image", programs, out)
        elif doc.kind == "k8s-manifest":
            for route, container in containers(root, (n,)):
                _invocation(doc, container, route, ("command", "args"), "image", programs, out)
    return out


def _dockerfile(doc: Document, root: list[Any], n: int, programs: frozenset[str], out: Commands) -> None:
    image: str | None = None
    from_route: Route = (n,)
    entry: list[Token] | None = None
    for i, item in enumerate(root):
        kw, value = next(iter(item.items()))
        route = (n, i, kw)
        if kw == "FROM":
            image, from_route, entry = value, route, None
        elif kw in ("CMD", "ENTRYPOINT") and isinstance(value, list):
            words = _items(doc, value, route)
            if kw == "ENTRYPOINT":
                entry = words
                _add(out, (n,), words, route)
            else:
                _add(
                    out,
                    (n,),
                    (entry if entry is not None else _implied(doc, image, from_route, programs)) + words,
                    route,
                )
        elif kw in ("RUN", "CMD", "ENTRYPOINT"):
            _words(doc, value, route, (n,), out)


def _invocation(
    doc: Document,
    body: dict[str, Any],
    route: Route,
    keys: tuple[str, str],
    image_key: str,
    programs: frozenset[str],
    out: Commands,
) -> None:
    entry_key, args_key = keys
    parts: list[Token] = []
    for key in keys:
        value = body.get(key)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            parts += _items(doc, value, route + (key,))
        elif isinstance(value, str) and value.strip():
            split = commands(_script(doc, value, doc.span(route + (key,), "value")))
            parts += [w for words in split for w in words]
    if not parts:
        return
    if entry_key not in body:
        parts = _implied(doc, body.get(image_key), route + (image_key,), programs) + parts
    _add(out, route, parts, route + (args_key if args_key in body else entry_key,))


def _script(doc: Document, value: str, span: Span) -> ScriptText:
    """A command string where it is written. A folded scalar (`command: >-` over several lines)
    is one line of text but several lines of source: each source line is kept at its place and
    joined to the next by a continuation, as the shell would read it."""
    if span[2] == span[0] or "\n" in value.strip():
        return map_lines(value, span, doc.lines)
    pieces: list[tuple[str, tuple[int, int]]] = []
    for n in range(span[0], min(span[2], len(doc.lines)) + 1):
        text = doc.line_text(n)[: span[3] - 1] if n == span[2] else doc.line_text(n)
        text = text[span[1] - 1 :] if n == span[0] else text
        content = text.strip()
        if content and not (n == span[0] and content in (">", ">-", ">+", "|", "|-", "|+")):
            col = len(doc.line_text(n)) - len(doc.line_text(n).lstrip()) + 1 if n != span[0] else span[1]
            pieces.append((content, (n, col)))
    return ScriptText(" \\\n".join(p for p, _ in pieces), tuple(at for _, at in pieces))


def _implied(doc: Document, image: Any, route: Route, programs: frozenset[str]) -> list[Token]:
    """The image's own program, when the image is one of `programs` (its entrypoint runs it)."""
    if not isinstance(image, str):
        return []
    name = image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0]
    if name not in programs:
        return []
    line, col, _, end_col = doc.span(route, "value")
    return [Token(name, line, col, end_col)]


def _items(doc: Document, items: list[str], route: Route) -> list[Token]:
    """List items as words, each at its own position (inside any quotes)."""
    if len(items) > 2 and items[0] in _SHELLS and items[1] == "-c":
        line, col, end_line, end_col = doc.span(route + (2,), "value")
        script = map_lines(items[2], (line, col, end_line, end_col), doc.lines)
        return [w for words in commands(script) for w in words]
    words = []
    for i, text in enumerate(items):
        line, col, _, _ = doc.span(route + (i,), "value")
        col += 1 if doc.line_text(line)[col - 1 : col] in "'\"" else 0
        words.append(Token(text, line, col, col + len(text)))
    return words


def _words(doc: Document, text: Any, route: Route, job: Route, out: Commands) -> None:
    """Shell-form text written in the file: its first line after the keyword, the rest as is."""
    if not isinstance(text, str):
        return
    line, col, _, _ = doc.span(route, "value")
    kept = [(k, part) for k, part in enumerate(text.split("\n")) if k == 0 or not part.lstrip().startswith("#")]
    starts = tuple((line, col) if k == 0 else (line + k, 1) for k, _ in kept)  # Docker drops comment lines
    script = ScriptText("\n".join(part for _, part in kept), starts)
    item = ScriptItem(script.text, route, job)
    for words in commands(script):
        out.setdefault(job, []).append((words, item))


def _add(out: Commands, job: Route, words: list[Token], route: Route) -> None:
    if words:
        out.setdefault(job, []).append((words, ScriptItem(" ".join(w.text for w in words), route, job)))
