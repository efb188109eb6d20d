"""From hits to findings: one finding per written place, fingerprints, suppressions, baseline.

Suppressed and baselined findings are counted in the report, never silently dropped; a
malformed suppression comment is an input error on its line.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date

from scanner.core.document import Document
from scanner.core.redact import redact
from scanner.core.results import Finding, InputError, Location, Move, Report
from scanner.core.versions import Version, in_effect
from scanner.engine.suppress import Suppressions
from scanner.rules.hints import fill, fill_message
from scanner.rules.hits import Hit


@dataclass(frozen=True, slots=True)
class FindingRules:
    """What turns a hit into a reported finding: the target and the user's choices."""

    target: Version
    today: date = field(default_factory=date.today)
    severity: dict[str, str] = field(default_factory=dict)  # policy id → forced severity
    baseline: frozenset[str] = frozenset()  # fingerprints to leave out
    current: Version | None = None  # the release the instance runs (`--from`); None: not known


def fingerprint(policy_id: str, loc: Location, matched: str, nth: int) -> str:
    """Policy, path, symbolic route and matched value (and which occurrence) — never the line."""
    text = f"{policy_id}\0{loc.path}\0{loc.symbolic}\0{matched}\0{nth}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(slots=True)
class Recorder:
    report: Report
    rules: FindingRules
    policy_ids: frozenset[str]
    located: set[tuple[str, str, int, int]] = field(default_factory=set)
    # told of every reported finding with the hit and document behind it (`sunset fix` keeps them)
    observer: Callable[[Finding, Hit, Document], None] | None = None
    # per file with suppressions: them, and the (line, policy id) pairs a finding used
    pending: dict[str, tuple[Suppressions, set[tuple[int, str]]]] = field(default_factory=dict)

    def record(self, doc: Document, hits: Iterable[Hit], suppressions_checked: bool = False) -> None:
        """`suppressions_checked`: the text's suppression comments were checked with another
        document of the same file (an embedded one), so their problems are not reported again."""
        suppressions = Suppressions.scan(doc.text, self.policy_ids, doc.kind)
        for problem in () if suppressions_checked else suppressions.problems:
            self.report.errors.append(InputError(doc.path, problem.line, problem.message))
        if suppressions.by_line and doc.path not in self.pending:
            self.pending[doc.path] = (suppressions, set())
        used = self.pending[doc.path][1] if doc.path in self.pending else set()
        occurrences: dict[tuple[str, str, str], int] = {}
        for hit in hits:
            loc = doc.location(hit.route, hit.part, hit.span)
            key = (hit.policy.id, loc.path, loc.line, loc.column)
            if key in self.located:
                continue  # written once, reached twice (alias, merge key): reported once
            self.located.add(key)
            ident = (hit.policy.id, loc.symbolic, hit.matched)
            occurrences[ident] = nth = occurrences.get(ident, 0) + 1
            note = ""
            suppression = suppressions.lookup(hit.policy.id, loc.line)
            if suppression is not None:
                used.add((suppression.line, hit.policy.id))
                if suppression.until is None or self.rules.today <= suppression.until:
                    self.report.suppressed += 1
                    continue
                note = f" (the suppression on line {suppression.line} expired on {suppression.until})"
            print_ = fingerprint(hit.policy.id, loc, hit.matched, nth)
            if print_ in self.rules.baseline:
                self.report.baselined += 1
                continue
            found = self.finding(hit, loc, print_, note, fill(hit.policy.data.hints, doc, hit.route, loc.symbolic,
                                                              hit.matched),
                                 fill_message(hit.policy.data.message, doc, hit.route, hit.matched))
            self.report.findings.append(found)
            if self.observer is not None:
                self.observer(found, hit, doc)

    def finish(self) -> None:
        """Every suppression that suppressed nothing becomes a warning (it does not fail the run)."""
        for path, (suppressions, used) in self.pending.items():
            for s in suppressions.by_line.values():
                for pid in sorted(s.ids):
                    if (s.line, pid) not in used:
                        message = f"unused suppression: no `{pid}` finding on this line or the next"
                        self.report.warnings.append(InputError(path, s.line, message))
        self.pending.clear()
        self.report.warnings.sort(key=lambda w: (w.path, w.line or 0, w.message))

    def finding(self, hit: Hit, loc: Location, print_: str, note: str, hint: str | None, message: str) -> Finding:
        """`hint`: the policy's replacement filled from this finding, `message` its message with the
        placeholders filled and the file's text redacted (`scanner.rules.hints`)."""
        p = hit.policy
        data = p.data
        if hit.detail:
            message += " " + redact(hit.detail)
        if data.history:
            message += " " + p.history_note()
        severity = self.rules.severity.get(p.id) or p.severity_at(self.rules.target, self.rules.current)
        if in_effect(p.removed, self.rules.current):
            message += (f" In effect since GitLab {p.removal.release}, at or before {self.rules.current}, "
                        "the release you run.")
        if hit.condition:  # a templated value decides it: the file alone does not say it applies
            message = f"If {hit.condition}: {message[:1].lower()}{message[1:]}"
            if severity == "error" and hit.policy.id not in self.rules.severity:
                severity = "warning"
        removal = p.removal
        return Finding(
            rule_id=p.id,
            title=data.title,
            severity=severity,
            message=message + note,
            location=loc,
            deprecated_in=data.deprecated_in,
            removed_in=removal.release,
            replacement=hint,
            docs_url=p.docs_url,
            matched=hit.matched,
            fingerprint=print_,
            removal=removal.status,
            first_announced=removal.announced,
            history=tuple(Move(h.release, h.event, h.removed_in, h.note.strip()) for h in data.history),
            origin=data.origin,
        )
