"""Which guard a request implies: how a free chat request gets its guard.

A bundle may declare its guard (``guard: docstring`` in ``bundle.yaml``); that
guard always applies. A ``code_agent`` turn gets the guard its request implies,
decided from the text of the person's request (``human_chat``), a message from
another agent (``agent_message``) or a rejection's feedback, exactly so:

1. The text is cut into clauses at ``.``, ``;``, ``,``, ``!``, ``?``, new lines
   and the words "and", "then", "also".
2. A clause whose first five words (after polite words) mention
   documentation — "docstring", "doc comment", "pydoc", "document…",
   "comment(s)" — asks for the ``docstring`` guard; one that
   mentions "type hint(s)", "type annotation(s)", "annotate…", "annotation(s)",
   "typing" or "add types" asks for ``type_hints``; one that says
   "rename X to Y" (also "X -> Y", "X into Y", with or without backticks and
   a word like "function" or "parameter" between) asks for ``rename`` with that
   pair, and "rename" without a pair asks for any consistent renaming.
3. Any other clause that starts, after polite words ("please", "could you",
   "can you", "now", …), with a verb from :data:`ACTION_VERBS` ("fix", "make",
   "add", "change", "handle", …) asks for more than that: the request is
   **free** and no guard applies ("add a docstring and fix the rounding").
   Clauses that start otherwise ("that says what it does", "thanks") say
   nothing.
4. The guard is the union of what the clauses asked for (a docstring and type
   hints may both change); no guard when none asked.

Several triggering events are read together: one free request frees the turn.
A turn run by a rejection whose feedback says nothing keeps the guard of the
rejected proposal (the same request, tried again). The model cannot state
its own guard: a guard protects what the person asked, so only the person's
words (or the bundle) choose it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from remora_core.review.guards import Guard

log = logging.getLogger(__name__)

ACTION_VERBS = frozenset(
    """add fix make change modify implement refactor rewrite remove delete drop
    replace handle support optimise optimize improve simplify speed clean use
    call move extract inline split merge convert update validate check raise
    return compute cache log print catch sort turn switch avoid accept take
    rework reimplement correct adjust insert append create write let ensure
    allow reorder rearrange restructure double triple halve multiply divide
    round increase decrease raise lower format parse count filter map reverse
    limit skip retry wrap include exclude apply treat stop start open close
    read save load send fetch store""".split()  # noqa: SIM905
)
"""A clause starting with one of these (and not about docs, types or names)
asks for a change in behaviour."""

HEAD_WORDS = 5
"""A clause asks for a guard when its first words name docs, types or a rename."""

_POLITE = re.compile(
    r"^(?:(?:please|kindly|now|also|then|and|just|could you|can you|would you|"
    r"will you|you should|i want you to|i'd like you to|go ahead and)\s+)+",
    re.I,
)
_CLAUSES = re.compile(r"[.;,!?\n]+|\b(?:and|then|also)\b", re.I)
_DOCS = re.compile(
    r"\b(?:docstrings?|doc[- ]?comments?|pydoc|document\w*|comments?)\b", re.I
)
_TYPES = re.compile(
    r"\b(?:type[- ]?hint\w*|type annotations?|annotat\w*|typing|add types)\b", re.I
)
_IDENT = r"`?([A-Za-z_][A-Za-z0-9_.]*)`?"
_RENAME = re.compile(
    rf"\brename\s+(?:(?:the|a|an|this|my|your)\s+)?"
    rf"(?:(?:function|method|class|parameter|param|argument|variable|attribute|"
    rf"name)\s+)?{_IDENT}\s+(?:to|->|→|into|as)\s+{_IDENT}",
    re.I,
)
_RENAME_WORD = re.compile(r"\brenam\w*\b", re.I)
_ITSELF = {"function", "method", "class", "it", "this", "yourself", "you", "me"}
"""Words that name the node itself ("rename this function to Y"): no old name is
given, so the pair is left out and any consistent renaming is allowed."""


def _last_part(name: str) -> str:
    """``pkg.mod.name.`` → ``name`` (a sentence's full stop is not part of it)."""
    return name.rstrip(".").split(".")[-1]


@dataclass(frozen=True)
class Intent:
    """What a text asks for: guard kinds, renames, or a free change."""

    kinds: frozenset[str] = frozenset()
    renames: tuple[tuple[str, str], ...] = ()
    free: bool = False
    """Something in the text asks for a change in behaviour."""

    @property
    def silent(self) -> bool:
        """The text says nothing about what may change."""
        return not self.kinds and not self.free


def read_intent(text: str) -> Intent:
    """What ``text`` asks for, by the rules of the module docstring."""
    renames = tuple(
        pair
        for old, new in _RENAME.findall(text)
        if (pair := (_last_part(old), _last_part(new)))[0] not in _ITSELF and all(pair)
    )
    kinds: set[str] = set()
    free = False
    # Rename pairs span "to", which is no clause boundary; read them first.
    rest = _RENAME.sub(" rename ", text)
    for clause in _CLAUSES.split(rest):
        clause = _POLITE.sub("", clause.strip())
        if not clause:
            continue
        # What a clause is about comes early ("add a short docstring"); a
        # mention later is a detail ("fix the bug the comment describes").
        head = " ".join(clause.split()[:HEAD_WORDS])
        found = set()
        if _DOCS.search(head):
            found.add("docstring")
        if _TYPES.search(head):
            found.add("type_hints")
        if _RENAME_WORD.search(head):
            found.add("rename")
        if found:
            kinds |= found
        elif clause.split()[0].lower() in ACTION_VERBS:
            free = True
    return Intent(frozenset(kinds), renames if "rename" in kinds else (), free)


def guard_for(texts: list[str], inherited: Guard | None = None) -> Guard | None:
    """The guard of a turn whose triggers say ``texts``.

    ``inherited``: the guard of the proposal a rejection is about; kept when
    the texts say nothing about what may change.
    """
    intents = [read_intent(text) for text in texts if text.strip()]
    if any(intent.free for intent in intents):
        return None
    kinds: frozenset[str] = frozenset()
    renames: tuple[tuple[str, str], ...] = ()
    for intent in intents:
        kinds |= intent.kinds
        renames += intent.renames
    if not kinds:
        return inherited
    asked = " / ".join(text.strip() for text in texts if text.strip())
    if len(asked) > 160:
        asked = asked[:157] + "…"
    return Guard(kinds, tuple(dict.fromkeys(renames)), asked)
