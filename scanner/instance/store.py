"""Files of an instance scan: fetched once per (project, ref, path) per run, kept on disk by blob id.

A template project included by 500 projects is fetched once per ref and parsed once per run. A file no
earlier run fetched comes whole in one request (`GET …/files/:path`, blob id and content); one an earlier
run fetched is asked for its blob id (`HEAD`) and its bytes come from the persistent cache (`BlobCache`,
content-addressed by Git's blob id, so a blob never goes stale), or from `…/raw` when it changed.
Threads asking for the same file at once wait for the first one's answer instead of asking GitLab again.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections.abc import Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from scanner.core.tree import ParseError, Tree
from scanner.instance.api import ApiError
from scanner.rules.documents import KINDS


@dataclass(frozen=True, slots=True, order=True)
class FileKey:
    project: str  # full path; `remote` for a URL
    ref: str
    path: str

    @property
    def shown(self) -> str:
        """How findings and errors name the file: `group/project@ref:path` (a URL as itself)."""
        return self.path if self.project == "remote" else f"{self.project}@{self.ref}:{self.path}"


@dataclass(frozen=True, slots=True)
class Fetched:
    key: FileKey
    blob: str
    text: str
    data: Tree | None  # None: `problem` says why it could not be read
    problem: tuple[int | None, str] | None = None


class Source(Protocol):
    """Where bytes come from (`scanner.instance.api.Api`, or a URL fetcher for remote includes)."""

    def blob_id(self, project: str, path: str, ref: str) -> str: ...

    def raw(self, project: str, path: str, ref: str) -> bytes: ...

    def file(self, project: str, path: str, ref: str) -> tuple[str, bytes]: ...


class BlobCache:
    """`<dir>/ab/cdef…`: a blob's bytes under its id; written atomically, so an interrupted scan leaves
    no half file. `None` as the folder keeps nothing."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.hits = 0

    def _path(self, blob: str) -> Path | None:
        if self.folder is None or len(blob) < 8 or not blob.isalnum():
            return None
        return self.folder / blob[:2] / blob[2:]

    def get(self, blob: str) -> bytes | None:
        path = self._path(blob)
        if path is None:
            return None
        try:
            data = path.read_bytes()
        except OSError:
            return None
        self.hits += 1
        return data

    def put(self, blob: str, data: bytes) -> None:
        path = self._path(blob)
        if path is not None:
            _write(path, data)

    def _seen_path(self, key: FileKey) -> Path | None:
        if self.folder is None:
            return None
        name = hashlib.sha256(f"{key.project}\0{key.ref}\0{key.path}".encode()).hexdigest()
        return self.folder / "seen" / name[:2] / name[2:]

    def seen(self, key: FileKey) -> bool:
        """An earlier scan fetched this (project, ref, path): its blob is likely cached, so ask for the id
        first (`HEAD`); a file never seen is fetched whole in one request."""
        path = self._seen_path(key)
        return path is not None and path.exists()

    def saw(self, key: FileKey) -> None:
        path = self._seen_path(key)
        if path is not None and not path.exists():
            _write(path, b"")


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-")
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(tmp, path)


def blob_of(data: bytes) -> str:
    """Git's blob id of bytes (what GitLab's `X-Gitlab-Blob-Id` says for a file)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def fetch_url(url: str, max_bytes: int) -> bytes:
    """A remote include, fetched without any credential (GitLab fetches it anonymously too)."""
    import requests  # only with --fetch-remote

    try:
        with requests.get(url, timeout=30, stream=True, allow_redirects=True) as response:
            if response.status_code != 200:
                raise ApiError(response.status_code, f"remote include answered {response.status_code}")
            return response.raw.read(max_bytes + 1, decode_content=True)  # type: ignore[no-any-return]
    except requests.RequestException as exc:
        raise ApiError(0, f"remote include: {type(exc).__name__}") from None


_PARSE = threading.Lock()  # the YAML reader's loader object is shared; one parse at a time


def parse_ci(key: FileKey, blob: str, data: bytes, max_bytes: int) -> Fetched:
    if len(data) > max_bytes:
        return Fetched(key, blob, "", None, (None, f"larger than {max_bytes} bytes; not scanned"))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Fetched(key, blob, "", None, (None, f"not UTF-8 (byte {exc.start}); not scanned"))
    try:
        with _PARSE:
            tree = KINDS["gitlab-ci"].parse(text)
    except ParseError as exc:
        return Fetched(key, blob, text, None, (exc.line, exc.message))
    return Fetched(key, blob, text, tree)


class Store:
    """Thread-safe: `get` returns the file or raises `ApiError`, once per key per run."""

    def __init__(self, source: Source, cache: BlobCache, max_bytes: int) -> None:
        self.source = source
        self.cache = cache
        self.max_bytes = max_bytes
        self.lock = threading.Lock()
        self.memo: dict[FileKey, Future[Fetched]] = {}
        self.fetched = 0  # bytes downloaded (cache misses)

    def get(self, key: FileKey) -> Fetched:
        with self.lock:
            future = self.memo.get(key)
            mine = future is None
            if future is None:
                future = self.memo[key] = Future()
        if mine:
            try:
                future.set_result(self._load(key))
            except ApiError as exc:
                future.set_exception(exc)
        return future.result()

    def forget(self, keys: Iterable[FileKey]) -> None:
        """Drop files no other project is expected to reach (a project's own), keeping memory bounded."""
        with self.lock:
            for key in keys:
                self.memo.pop(key, None)

    def _load(self, key: FileKey) -> Fetched:
        if key.project == "remote":  # `--fetch-remote`: no blob id to ask for first
            body = fetch_url(key.path, self.max_bytes)
            return parse_ci(key, blob_of(body), body, self.max_bytes)
        cached: bytes | None = None
        if self.cache.seen(key):  # likely cached: the id (HEAD), then the bytes only if they changed
            blob = self.source.blob_id(key.project, key.path, key.ref)
            cached = self.cache.get(blob)
            data = self.source.raw(key.project, key.path, key.ref) if cached is None else cached
        else:  # never fetched: id and bytes in one request
            blob, data = self.source.file(key.project, key.path, key.ref)
        if cached is None:
            self.cache.put(blob, data)
            with self.lock:
                self.fetched += 1
        self.cache.saw(key)
        return parse_ci(key, blob, data, self.max_bytes)
