"""What a detector raises: a frozen record, turned into its JSON dict only at the output edges
(the findings topic, the replay document, the text report, the worker's views).

Every record has `kind` (a class constant), `id` (stable across a finding's updates: the
findings topic's key), `policy` (the scanner policy id, `policies/<group>/<id>.yaml`, that the
finding is the runtime evidence of, or None), `as_dict()` (the published JSON: `policy` is not
in it, so the document and the topic are what they were before records), `from_dict()` (its
inverse, for dicts read back from state or a document) and `describe()` (one line of text).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol


class Finding(Protocol):
    kind: ClassVar[str]

    @property
    def id(self) -> str: ...

    @property
    def policy(self) -> str | None: ...

    def as_dict(self) -> dict[str, Any]: ...

    def describe(self) -> str: ...

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Finding: ...


@dataclass(frozen=True, slots=True)
class User:
    """The GitLab user a finding is about: `{"id": …, "name": …}` in JSON."""

    id: int | None
    name: str | None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> User | None:
        return User(data.get("id"), data.get("name")) if data else None

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name}


def user_dict(user: User | None) -> dict[str, Any] | None:
    return None if user is None else user.as_dict()


def user_text(user: User | None) -> str:
    return "no user (authentication log)" if user is None else f"{user.name or 'user'} ({user.id})"


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else many or word + 's'}"
