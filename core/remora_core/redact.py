"""Scrubbing secrets out of every text that leaves the model layer (DESIGN §12).

A model server's error can echo the request — its ``Authorization`` header, the
person's API key — and a ``base_url`` may carry a password
(``http://user:pass@host/v1``). :func:`scrub` removes those from a text:

- the value of every key the server read (:func:`register_secret`, called where
  a key is read from the environment), also in its JSON-escaped form;
- the value of ``Authorization`` / ``Proxy-Authorization`` / ``X-Api-Key`` /
  ``api_key`` headers and parameters, and any ``Bearer <token>``;
- the userinfo of URLs (``scheme://user:pass@host`` → ``scheme://[redacted]@host``).

It is applied at the boundaries, once each, not sprinkled through the code:
where events are persisted and published (``events/store.py``), where a run's
error is written (``swarm/runner.py``, ``store/runs.py``), in a logging filter on
every handler (:class:`RedactingFilter`) and in the messages the language server
sends (``remora_lsp/protocol.py``).

Values shorter than :data:`MIN_SECRET_LENGTH` are not scrubbed by value (every
``e`` of a text would go for a one-letter key); headers and URLs still are.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from typing import Any

REDACTED = "[redacted]"

MIN_SECRET_LENGTH = 8
"""Shorter key values are not scrubbed by value (see the module docs)."""

_secrets: tuple[str, ...] = ()
"""Every registered secret and its JSON-escaped form, longest first. Replaced as
a whole (never mutated), so readers in other threads see a consistent tuple."""
_lock = threading.Lock()

_SUSPECT_WORDS = ("authorization", "bearer", "api_key", "api-key", "apikey")
"""A cheap first look (substring tests on the lowercased text; a regex with
IGNORECASE costs ten times more): texts without any of these, and without a
``://`` followed somewhere by ``@``, need no further work."""
_HEADER = re.compile(
    r"((?:proxy-)?authorization|x-api-key|api[-_]?key)"  # the name
    r"([\"'\\\s]*[:=]\s*[\"'\\]*)"  # the separator, quotes and escapes around it
    r"((?:bearer|basic|token)\s+)?"  # the scheme, kept
    r"(?!\[redacted\]|(?:bearer|basic|token)\s)[^\s\"'\\,;}\])]+",  # the value
    re.IGNORECASE,
)
_BEARER = re.compile(r"\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)
"""A bearer token without its header (tokens are long; "bearer of" is not one)."""
_USERINFO = re.compile(r"([a-z][a-z0-9+.-]*://)[^\s/@\"'\\<>]+@", re.IGNORECASE)


def register_secret(value: str | None) -> None:
    """Scrub ``value`` (a key read from the environment) from now on."""
    global _secrets
    if not value or len(value) < MIN_SECRET_LENGTH:
        return
    escaped = json.dumps(value)[1:-1]
    with _lock:
        known = set(_secrets)
        known.update({value, escaped})
        _secrets = tuple(sorted(known, key=len, reverse=True))


def scrub(text: str) -> str:
    """``text`` without key values, authorization values and URL userinfo.

    Returns ``text`` itself when there is nothing to remove (callers may test
    ``is``).
    """
    if not isinstance(text, str) or not text:
        return text
    found = [s for s in _secrets if s in text]
    if not found and not _suspect(text):
        return text
    clean = text
    for secret in found:
        clean = clean.replace(secret, REDACTED)
    clean = _HEADER.sub(lambda m: f"{m[1]}{m[2]}{m[3] or ''}{REDACTED}", clean)
    clean = _BEARER.sub(lambda m: f"{m[1]} {REDACTED}", clean)
    clean = _USERINFO.sub(lambda m: f"{m[1]}{REDACTED}@", clean)
    return text if clean == text else clean


def _suspect(text: str) -> bool:
    """Whether ``text`` may hold a header value, a bearer token or userinfo
    (:data:`_SUSPECT_WORDS`, spelled out: this runs for every event).
    """
    lowered = text.lower()
    if (
        "authorization" in lowered
        or "bearer" in lowered
        or "api_key" in lowered
        or "api-key" in lowered
        or "apikey" in lowered
    ):
        return True
    scheme = text.find("://")
    return scheme >= 0 and "@" in text[scheme:]


def scrub_json(value: Any) -> Any:
    """``value`` (JSON-like data) with :func:`scrub` applied to every string."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {key: scrub_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_json(item) for item in value]
    return value


class RedactingFilter(logging.Filter):
    """A handler filter that scrubs every record's message and traceback.

    Put on each handler (a filter on a logger does not see records that
    propagate from its children).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Scrub ``record`` in place; never drops it."""
        try:
            message = record.getMessage()
        except Exception:  # a broken format string is the handler's problem
            return True
        clean = scrub(message)
        if clean is not message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = scrub(record.stack_info)
        return True
