"""Credentials recognised by what they look like, wherever they stand on a line.

`scanner.core.masks` finds secrets by where they are written (the value of a `password:` key, a
`-u user:pw`, a URL's userinfo). This module finds them by their form, whatever surrounds them:

* `FORMS`: the published token formats of GitLab and of the services pipelines talk to (AWS, Slack,
  GitHub, Google, Stripe, npm, PyPI, Vault, JWTs, …). They are facts about those formats, written
  here after the public rule sets of secret scanners (gitleaks' rules, detect-secrets' plugins).
  Every alternative starts with a literal and repeats only single character classes with bounds,
  so the search does a bounded amount of work at each position of the line.
* `random_spans`: anything else that reads as random — a run of token characters whose parts are
  not words, names or numbers (`Zq7kP2mX9vB4nR8tL3wY`, a base64 blob, a hex key) — is taken for a
  credential. Identifiers (`CI_JOB_JWT_V2`, `runnersRegistrationTokenReset`, `x86_64`) and paths of
  words (`$CI_SERVER_FQDN/group/project/scan@1.0`) are not.

detect-secrets itself is not a dependency: its plugins are found by import side effects and read a
global settings object, it scans whole files for keyword assignments that `masks` reads here with
the quoting of each language, and its high-entropy plugins look only inside quoted strings. The
random test here applies to every run of token characters, quoted or not.
"""

from __future__ import annotations

import math
import re
from collections import Counter

Span = tuple[int, int]

# One alternative per format; bounded repetitions of character classes only (linear work).
FORMS = re.compile(
    "|".join(
        (
            # GitLab: runner registration, runner authentication (also routable), personal, project,
            # group access, deploy, feed, incoming mail, agent, CI/CD job, OAuth application, SCIM,
            # feature flag client and pipeline trigger tokens; the session cookie.
            r"GR1348941[\w-]{8,300}",
            r"gl(?:rt|pat|dt|ptt|ft|imt|agent|cbt|oas|soat|ffct|rtr|wt|sa|c)-[\w.-]{8,300}",
            r"_gitlab_session=[\w%-]{8,300}",
            # AWS access key ids, Google API keys, GitHub tokens, Slack tokens and webhooks.
            r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
            r"\bAIza[\w-]{35}",
            r"\bgh[pousr]_[A-Za-z0-9]{30,255}",
            r"\bgithub_pat_\w{40,255}",
            r"\bxox[abposer]-[\w-]{8,300}",
            r"\bxapp-\d-[\w-]{8,300}",
            r"(?<=hooks\.slack\.com/)(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,120}",
            r"(?<=discord\.com/api/webhooks/)[\w/-]{20,200}",
            r"(?<=\.webhook\.office\.com/webhookb2/)[\w@/-]{20,300}",
            # Stripe, Twilio, SendGrid, npm, PyPI, RubyGems, Shopify, DigitalOcean, Doppler, Vault,
            # Terraform Cloud, Databricks, Postman, Atlassian, Hugging Face, OpenAI and Anthropic.
            r"\b(?:sk|rk|pk)_(?:test|live|prod)_[A-Za-z0-9]{10,99}",
            r"\bSK[0-9a-fA-F]{32}\b",
            r"\bSG\.[\w.-]{20,80}",
            r"\bnpm_[A-Za-z0-9]{30,40}",
            r"pypi-AgE[\w-]{40,1000}",
            r"\brubygems_[a-f0-9]{40,60}",
            r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
            r"\bdo[opr]_v1_[a-f0-9]{60,70}",
            r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[\w-]{20,80}",
            r"\bhv[sbr]\.[\w-]{20,300}",
            r"\b[a-z0-9]{14}\.atlasv1\.[\w=-]{40,100}",
            r"\bdapi[a-f0-9]{32}",
            r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}",
            r"\bATATT[\w=-]{20,300}",
            r"\bhf_[A-Za-z]{30,40}",
            r"\bsk-(?:proj-|svcacct-|admin-|ant-)?[\w-]{20,300}",
            r"\bsq0(?:atp|csp)-[\w-]{22,60}",
            r"\bEAA[A-Za-z0-9]{30,300}",
            r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,70}",
            r"\b(?:sntrys|sntryu)_[\w+/=]{30,400}",
            r"\bglsa_[A-Za-z0-9_]{30,60}",
            r"\blin_api_[A-Za-z0-9]{30,50}",
            r"\bpul-[a-f0-9]{40}",
            r"\b(?:pnu|ntn|pplx|ico|rdme)_?-?[A-Za-z0-9]{30,80}",
            # JSON Web Tokens (three base64url parts, the first two a JSON object) and private keys.
            r"\bey[A-Za-z0-9_-]{10,4000}\.ey[A-Za-z0-9_-]{10,8000}\.[A-Za-z0-9_-]{0,4000}",
            r"-----BEGIN[ A-Z0-9_-]{0,60}PRIVATE KEY(?: BLOCK)?-----",
        )
    )
)

_RUN = re.compile(r"[A-Za-z0-9+/_~-]{16,}={0,2}")
# A commit (`ref: <sha>`, a component `@<sha>`, `/-/blob/<sha>/`), shown as written.
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_PATH_CHARS = re.compile(r"[A-Za-z0-9_-]+")
_COMMIT_PATHS = frozenset({"blob", "tree", "raw", "commit", "commits", "archive"})
_COMMIT_BEFORE = re.compile(r"(?:@|/-/(?:blob|tree|raw|commit|commits)/"
                            r"|(?i:sha|commit|ref|rev|revision|checkout|digest)[\w-]{0,12}"
                            r"['\"]?[ \t]*[:=][ \t]*['\"]?)$")
_PARTS = re.compile(r"[A-Za-z0-9+=~]+")
# Checksums and image digests are named as such: `sha256:<hex>`, `@sha256:<hex>`.
_DIGEST = re.compile(r"(?:sha1|sha256|sha384|sha512|md5)[:=~]$", re.I)


# Pairs of letters frequent in names and words (counted over sunset's docs and policies and over
# Python's standard library): random letters make pairs outside this set about two times in three.
_COMMON_PAIRS = frozenset(
    (
        "abacadafagaiakalamanaparasatauavawaxayazbabdbebibjblbobrbsbubycacccechcickclcmcocrcsctcucydadbdddedfdgdidldo"
        "dpdrdsdudyeaebecedeeefegeielemeneoepeqereseteuevewexeyfafefffiflfofrfsftfugageggghgiglgngogrgsgtguhahehihmho"
        "hrhshtiaibicidieifigikiliminioipirisitivixizjejojskakekikmkskwlaldlelflglilllolsltlulymambmemimlmmmompmsmuna"
        "ncndnenfngninknlnmnnnonpnsntnunvnyoaobocodofogoiojokolomonoooporosotouovowpapcpdpephpiplpoppprpsptpupyqlqura"
        "rcrdrerfrgrirkrlrmrnrorprrrsrtrurvrysascsesgshsiskslsmsnsospssstsuswsytatctethtitltmtotptrtstttutwtxtyuaubuc"
        "udueuguiulumunupurusutvavevivovpwawewhwiwnwowrwsxaxcxexixpxtycyeymynyoypysytzazezo"
    )[i : i + 2]
    for i in range(0, 622, 2)
)


def _humps(part: str) -> list[str]:
    """The words of a camelCase or PascalCase name: `previousStageJobsOrNeeds` → previous, Stage, …"""
    humps: list[str] = []
    start = 0
    for i in range(1, len(part)):
        if part[i].isupper() and not part[i - 1].isupper() or part[i - 1].isupper() and part[i].isupper() \
                and i + 1 < len(part) and part[i + 1].islower():
            humps.append(part[start:i])
            start = i
    humps.append(part[start:])
    return humps


def _letters_wordlike(runs: list[str]) -> bool:
    """Letters that spell names: acronyms, or words (of camelCase, snake_case) whose pairs of
    letters are common in English. Random letters change case every letter or two, put capitals
    together and pair rarely-seen letters."""
    split = [_humps(run) for run in runs]
    humps = [h for hs in split for h in hs]
    regular = all(len(h) >= 3 and (h.istitle() or h.islower()) or (h.isupper() and len(h) <= 4) for h in humps)
    letters = sum(len(run) for run in runs)
    mixed = any(ch.isupper() for run in runs for ch in run) and any(ch.islower() for run in runs for ch in run)
    if mixed and not regular:
        short = sum(1 for hump in humps if len(hump) <= 2)
        # capitals together inside a camelCase run (a whole `-DAST-` part is an acronym)
        capitals = sum(1 for hs in split if len(hs) > 1 for hump in hs if hump.isupper() and len(hump) > 1)
        if short > max(1, len(humps) // 2) or capitals > max(1, letters // 12):
            return False
    pairs = rare = 0
    for hump in humps:
        if hump.isupper() and (len(hump) <= 4 or not mixed):
            continue  # an acronym, or a CONSTANT_NAME's word
        if hump.isupper():
            return False  # a long run of capitals inside mixed case
        low = hump.lower()
        for i in range(len(low) - 1):
            pairs += 1
            rare += low[i : i + 2] not in _COMMON_PAIRS
    # whole words (`Coverage-Fuzzing`, `jobsOrNeeds`) may pair letters more freely
    return pairs < 3 or rare * (3 if regular else 5) < pairs


def _path_word(piece: str) -> bool:
    """A word of a path between slashes (`group`, `my-project`, `Templates`), not a piece of base64
    (nor a short piece next to one: `v4/<token>` is masked whole)."""
    if len(piece) <= 3 or not _PATH_CHARS.fullmatch(piece):
        return False
    if not all(_wordlike(p) for p in _PARTS.findall(piece)):
        return False
    if piece[0].isdigit() and not piece.isdigit() or sum(1 for a, b in zip(piece, piece[1:], strict=False)
                                                         if a.isdigit() != b.isdigit()) > 1:
        return False  # digits only at the end (`release2024`), or a number (`404`)
    runs = "".join(ch if ch.isalpha() else " " for ch in piece).split()
    return all(len(h) >= 3 and (h.istitle() or h.islower()) or h.isupper() and (len(h) <= 4 or run.isupper())
               for run in runs for h in _humps(run)) and _letters_wordlike(runs)


def _wordlike(part: str) -> bool:
    """A word, a name, a number or a short mix (`x86`, `ubuntu2204`, `XMLHttpRequest`, `V2`): at
    most three changes between letters and digits, and its letters spell names."""
    n = len(part)
    digit_changes = sum(1 for a, b in zip(part, part[1:], strict=False) if a.isdigit() != b.isdigit())
    if n <= 5:  # `x86`, `k8s`, `v2`, `Ab`, `API`: one case of letters, digits changing at most twice
        letters = "".join(ch for ch in part if ch.isalpha())
        return digit_changes <= 2 and (letters.islower() or letters.isupper() or letters.istitle() or not letters)
    if part.isdigit():
        return n < 16
    if sum(ch.isdigit() for ch in part) >= 14:
        return False  # a long number with a letter or two in it
    if digit_changes > 3:
        return False
    return _letters_wordlike("".join(ch if ch.isalpha() else " " for ch in part).split())


def entropy(text: str) -> float:
    """Shannon entropy of the characters, in bits per character."""
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values()) if n else 0.0


def is_random(segment: str) -> bool:
    """A run of token characters that no one would write by hand."""
    core = segment.strip("=-_~")
    if len(core) < 12:
        return False
    parts = _PARTS.findall(core)
    unword = sum(len(p) for p in parts if not _wordlike(p))
    if unword >= 10 and unword * 2 >= len(core) and entropy(core) >= 2.5:
        return True
    # base64url cut into short parts by `-` and `_`: taken together, in both cases, they spell no name
    runs = [run for p in parts for run in "".join(ch if ch.isalpha() else " " for ch in p).split()]
    letters = "".join(runs)
    return not letters.islower() and not letters.isupper() and not _letters_wordlike(runs) and entropy(core) >= 3.0


def random_spans(text: str) -> list[Span]:
    """Spans of `text` that read as random. A run is cut at `/` into segments (paths, base64); the
    segments between two words of a path are masked together when one of them, or all of them
    read as one, is random."""
    out: list[Span] = []
    for m in _RUN.finditer(text):
        start = m.start()
        if _DIGEST.search(text, max(0, start - 8), start):
            continue  # a checksum, an image digest
        group: list[str] = []
        group_start = pos = start
        previous = ""
        for piece in [*m.group().split("/"), None]:
            commit = piece is not None and _COMMIT.fullmatch(piece) is not None and (
                previous in _COMMIT_PATHS or (pos == start and _COMMIT_BEFORE.search(text, max(0, start - 24), start)))
            previous = piece or ""
            if piece and not commit and not _path_word(piece):
                if not group:
                    group_start = pos
                group.append(piece)
            elif group:
                if any(is_random(p) for p in group) or (len(group) > 1 and is_random("".join(group))):
                    out.append((group_start, group_start + len("/".join(group))))
                group = []
            pos += len(piece or "") + 1
    return out


def form_spans(text: str) -> list[Span]:
    """Spans of `text` in a known credential format."""
    return [m.span() for m in FORMS.finditer(text)]
