"""What a matcher kind declares: its record (`MatcherKind`), the last statement of its module.

The record names the kind's `match:` format (a `scanner.rules.spec.Spec`), its compiled matcher and
`compile`, the document facets it reads with one evaluation per facet, and how the policies of one
document kind are grouped once per scan before that evaluation. `scanner.rules.table` lists the
modules; the loader, the index and the evaluation loop read everything else from these records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from scanner.rules.policy import Policy
from scanner.rules.spec import Build, Matcher, Spec

if TYPE_CHECKING:
    from scanner.rules.facets import Facets
    from scanner.rules.hits import Hit

S = TypeVar("S", bound=Spec)
M = TypeVar("M", bound=Matcher)
G = TypeVar("G")

# The (policy, matcher) pairs of one kind among the policies of one document kind, in catalog order.
Entries = list[tuple[Policy, Any]]
# The entries of another kind, by its name (`template-unknown` leaves alone the names `template-include` reports).
Peers = Callable[[str], Entries]


def as_listed(entries: Entries, peers: Peers) -> Entries:
    """The grouping of a kind that needs none: its entries as they are."""
    return entries


@dataclass(frozen=True, slots=True)
class MatcherKind(Generic[S, M, G]):
    spec: type[S]  # the `match:` format, without `kind` (added from the matcher's name)
    matcher: type[M]  # its `kind` is the kind's name in policy files
    compile: Callable[[S, Build], M]
    # Each facet it reads (`scanner.rules.documents`) and its evaluation over a document carrying it:
    # the kind's group of policies and the document's facets in, hits out.
    reads: Mapping[str, Callable[[G, Facets], Iterable[Hit]]]
    group: Callable[[Entries, Peers], G] = as_listed  # type: ignore[assignment]
    # The facets of the document kinds a policy of this kind applies to when it does not say
    # (`applies_to`); empty: the facets it reads.
    applies: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.matcher.kind

    @property
    def default_facets(self) -> frozenset[str]:
        return frozenset(self.applies or self.reads)
