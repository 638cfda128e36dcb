"""The VS Code e2e's new files and change sets (``clients/vscode/test/e2e/sets.js``,
issue 27 §1–§2): how the scripted model answers its asks, and what is asserted
of what it saw.

``order``'s agent is asked five times: a new ``tests/test_service.py``; a set
adding a currency over ``pkg/service.py``, ``pkg/models.py`` and a new
``pkg/currency.py``; a set rejected with feedback; a set one member of which
(its new file) is rejected with feedback before the rest is accepted; a set
one of whose documents the person edits before accepting (nothing applied,
stale).
"""

from __future__ import annotations

import json
from typing import Any

from remora_lsp.testing.model_server import Reply
from tests.change_set_texts import CURRENCY, MAKE_ITEM, ORDER, TEST_FILE

UNUSED = '''def unused(item: Item):
    """Kept for the rates."""
    return item'''
REGISTERED = '''def registered(cls):
    """Mark a model class."""
    return cls'''
RATES = 'RATES = {"EUR": 1.0}\n'
FEEDBACK = "SETS_FEEDBACK keep the rates where they are"
AUDITED = '''def audited(order_total):
    """Checked by a person."""
    return order_total'''
TAGGED = '''def tagged(item):
    """Marked for the audit."""
    return item'''
MEMBER_RATES = 'AUDIT_RATES = {"EUR": 1.0}\n'


def _set(summary: str, new_file: str) -> Reply:
    changes = [
        {"path": "pkg/service.py", "new_source": UNUSED},
        {"path": "pkg/models.py", "new_source": REGISTERED},
        {"path": new_file, "new_source": RATES},
    ]
    return Reply(
        tool_calls=[("propose_changes", {"changes": changes, "summary": summary})]
    )


def reply(request: dict[str, Any]) -> Reply | None:
    """The answer to one of sets.js's asks (None: not one of them)."""
    messages = request.get("messages") or []
    users = [m for m in messages if m.get("role") == "user"]
    if (messages and messages[-1].get("role") == "tool") or not users:
        return None
    last = json.dumps(users[-1])
    if "SETS_FEEDBACK" in last:
        return Reply(text="Understood: the rates stay where they are.")
    if "SETS_NEW_FILE" in last:
        args = {
            "path": "tests/test_service.py",
            "content": TEST_FILE,
            "reason": "tests for order",
        }
        return Reply(tool_calls=[("create_file", args)])
    if "SETS_CHANGE_SET" in last:
        changes = [
            {"path": "pkg/service.py", "new_source": ORDER},
            {"path": "pkg/models.py", "new_source": MAKE_ITEM},
            {"path": "pkg/currency.py", "new_source": CURRENCY},
        ]
        return Reply(
            tool_calls=[
                ("propose_changes", {"changes": changes, "summary": "add currency"})
            ]
        )
    if "SETS_REJECT_SET" in last:
        return _set("move the rates", "pkg/moved_rates.py")
    if "SETS_MEMBER_SET" in last:
        changes = [
            {"path": "pkg/service.py", "new_source": AUDITED},
            {"path": "pkg/models.py", "new_source": TAGGED},
            {"path": "pkg/audit_rates.py", "new_source": MEMBER_RATES},
        ]
        return Reply(
            tool_calls=[("propose_changes", {"changes": changes, "summary": "audit"})]
        )
    if "SETS_STALE_SET" in last:
        return _set("document the rates", "pkg/rates.py")
    return None


def rows(view: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in view if r["kind"] == kind]


def check(seen: dict[str, Any], requests: list[dict[str, Any]]) -> None:
    """What a person would notice of new files and change sets."""
    s = seen["sets"]
    # 1. The new file: listed as what accepting does, accepted from its item;
    # the file exists with its text (unsaved, as any edit before saving).
    created = rows(s["newFileView"], "proposal")
    (listed,) = [r for r in created if r["label"].startswith("create ")]
    assert listed["label"] == "create tests/test_service.py (+5)"
    assert listed["description"].startswith("new file · ")
    assert listed["icon"] == "new-file"
    assert "Accept: create tests/test_service.py (+5)" in s["newFileActions"]
    assert s["newFileBefore"] is False
    assert s["newFileAccepted"] == {"applied": True}
    after = s["newFileAfter"]
    assert after["exists"] and after["text"] == TEST_FILE and after["dirty"]
    assert after["disk"] == ""  # created empty; its text is an unsaved edit
    # Undo in its editor takes the whole edit back: VS Code deletes the file
    # it created (and closes its editor), as if never accepted.
    assert s["newFileUndone"] == {"exists": False, "text": None, "closed": True}, s[
        "newFileUndoShot"
    ]

    # 2. The set: one item with its summary and counts, a child per member
    # (file, definition, +/- lines, new file marked, what it needs).
    (item,) = rows(s["view"], "changeSet")
    assert item["label"] == (
        "Change set: add currency (2 definitions in 2 files, 1 new file)"
    )
    assert item["context"] == "changeSet"
    members = rows(s["view"], "member")
    assert [m["label"] for m in members] == [
        "1. pkg/service.py · order",
        "2. pkg/models.py · make_item",
        "3. pkg/currency.py",
    ]
    assert members[0]["description"].endswith("needs 2, 3")
    assert members[1]["description"].endswith("needs 3")
    assert members[2]["description"] == "new file · +5"
    assert members[2]["icon"] == "new-file"
    # Not under a file: the set is its own item; counted in the open file.
    assert not [r for r in rows(s["view"], "proposal") if "currency" in r["label"]]
    assert s["statusHere"]["visible"] is True
    # A member's diff: the new file against nothing, as Python; a rewrite
    # against the definition now.
    assert s["memberDiff"]["left"] == "" and s["memberDiff"]["right"] == CURRENCY
    assert s["memberDiff"]["language"] == "python"
    assert s["memberDiff"]["label"].startswith("3/3 currency.py: change set ")
    assert s["modelsDiff"]["left"].startswith("def make_item(name, price=1.0):")
    assert s["modelsDiff"]["right"] == MAKE_ITEM
    # The whole set in one editor titled with it.
    assert "error" not in s["setDiffTab"], s["setDiffTab"]
    assert s["setDiff"]["kind"] == "change_set"
    # A member that needs others is not accepted alone; the set says why.
    assert s["memberAlone"]["applied"] is False
    assert (
        "1. pkg/service.py · order needs 2. pkg/models.py · make_item"
        in (s["memberAlone"]["reason"])
    )
    # Rejecting a member others need: refused by the server, naming them.
    assert s["memberNeeded"]["rejected"] is False
    assert (
        "member 3 (pkg/currency.py) is needed by member 1 (rewrite order), "
        "member 2 (rewrite make_item)" in s["memberNeeded"]["reason"]
    )
    # The members' code actions on order's line: its own and the new file's;
    # the refused one answers nothing (the server shows why).
    assert s["memberActions"] == [
        "Reject member 1 of the change set (rewrite order) with feedback…",
        "Reject member 3 of the change set (pkg/currency.py) with feedback…",
    ]
    assert s["memberActionRefused"] is None
    assert "currency" not in s["before"]["service"]
    # Accept All: every file changed, the new one created with its text.
    assert s["accepted"] == {"applied": True}
    assert "currency=currency" in s["after"]["service"]
    assert "convert(price, currency)" in s["after"]["models"]
    assert s["after"]["currencyExists"] and s["after"]["currency"] == CURRENCY
    assert not rows(s["viewAfter"], "changeSet")

    # 3. Rejected with feedback: the agent that made the set reads it.
    assert "run_id" in s["rejected"], s["rejected"]
    assert s["rejectedEvent"]["type"] == "rewrite_rejected"
    assert any(FEEDBACK in json.dumps(r) for r in requests)

    # 3b. One member rejected from its item's context menu, with feedback:
    # the set lists the two left, the agent reads it, the file is never
    # created; Accept All lands the rest.
    assert "Reject Only This Member…" in s["memberMenu"]
    assert "run_id" in s["memberRejected"], s["memberRejected"]
    assert s["memberRejectedEvent"]["members"] == [0]
    (set_row, *member_rows) = s["memberView"]
    assert set_row["label"] == "Change set: audit (2 definitions in 2 files)"
    assert [m["label"] for m in member_rows] == [
        "1. pkg/service.py · audited",
        "2. pkg/models.py · tagged",
    ]
    assert s["memberRatesAfterReject"] is False
    assert s["memberRestAccepted"] == {"applied": True}
    rest = s["memberRestAfter"]
    assert "def audited(order_total):" in rest["service"]
    assert "def tagged(item):" in rest["models"]
    assert rest["ratesExists"] is False

    # 4. One document edited first: nothing applied, the set stale, said so
    # and shown so in the view (with why) until dismissed.
    assert "pkg/models.py changed" in s["staleEvent"]["reason"]
    assert s["staleAccepted"]["applied"] is False
    assert "stale" in s["staleAccepted"]["reason"]
    assert s["staleAfter"]["serviceUnchanged"] is True
    assert (
        s["staleAfter"]["models"]
        == "# priced in euros\n" + s["staleAfter"]["modelsBefore"]
    )
    assert s["staleAfter"]["ratesExists"] is False
    (shown,) = rows(s["viewStale"], "changeSet")
    assert shown["label"].startswith("Change set: document the rates (")
    assert shown["context"] == "changeSetStale" and shown["icon"] == "warning"
    assert shown["description"].startswith("stale: nothing applied · ")
    assert "pkg/models.py changed" in shown["description"]
    assert not rows(s["viewDismissed"], "changeSet")
    toasts = " ".join(s["staleShot"]["notifications"])
    assert "nothing applied" in toasts and "stale" in toasts, s["staleShot"]
