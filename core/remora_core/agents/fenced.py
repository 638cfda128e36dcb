"""The ``fenced`` turn protocol, for small models that cannot call tools.

Measured on the embedded 0.5B model: native tool calls 0/12 valid, a fenced
python block read as the rewrite 11/12 (``../shared/reference/local-llm``). So
in this protocol the model writes plain text, and the kernel reads it:

- a fenced python code block (```` ```python ````, ```` ```py ```` or a bare
  fence whose content is Python) is the agent's new source: ``rewrite_self``;
- lines starting with one of these keywords are actions, parsed strictly::

      READ: rm_xxxxxxxx              -> read_node (the source comes back next turn)
      SEARCH: words                  -> search_nodes (the matches come back)
      REFERENCES: rm_xxxxxxxx        -> find_references (callers, importers)
      MESSAGE rm_xxxxxxxx: text      -> message_node
      ASK_PARENT: text               -> ask_parent
      ASK_USER: question             -> ask_user
      OPTIONS: yes | no              -> (optional, right after ASK_USER) its options
      CREATE_FILE: tests/test_x.py   -> create_file: the code block is its content

- several edits reviewed as one (``propose_changes``): each code block right
  after a line ``CHANGE rm_xxxxxxxx`` (that node's new source) or ``CHANGE
  path/to/file.py`` (a definition of that file, or a new file's content),
  with a ``SUMMARY: text`` line — a model not held to one block by a grammar;
- a reply with neither is an answer to the person.

A keyword line that does not follow its form, or more than one code block
(outside ``CHANGE``), is unparseable: the model gets one retry message that
says exactly what was wrong and what the form is (:class:`FencedError`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

FENCED_RULES = """Rules:
- To change yourself, reply with only your complete new source in ONE fenced code block, without explanations:
```python
<your whole new definition>
```
- To do something else, write one of these lines:
READ: <node id>            (see another node's source)
MESSAGE <node id>: <text>  (ask another node's agent to change itself)
ASK_PARENT: <text>         (ask your parent)
ASK_USER: <question>       (ask the person)
- Otherwise, just answer in plain text.
- Your parent may change you. Every edit is a proposal until a person accepts it."""
FENCED_CHANGE_RULES = """To propose other files, write one of these lines:
CREATE_FILE: <path>        (a new file: its whole content in the code block)
CHANGE <node id or path>   (before each code block of a change set; add SUMMARY: <text>)"""
"""The lines of an agent whose bundle has ``create_file`` (a separate
paragraph, as the look-around lines)."""

FENCED_LOOK_RULES = """To look around the project, write one of these lines:
SEARCH: <words of a name>  (find nodes; gives their ids)
REFERENCES: <node id>      (who calls it, which files import it)"""
"""The lines of an agent whose bundle has ``search_nodes`` and
``find_references`` (a separate paragraph: a bundle without them is not
told of lines it cannot use)."""

"""What a fenced agent may write. "Only ... without explanations": the 0.5B
model otherwise explains its change before the block (40-60 tokens of a
20-token fix, ~1 s on two cores); the action lines stay one per line (written
on one line, the model copied them as its answer)."""

FENCED_GRAMMAR = r"""root ::= text | text-line? block
text ::= char+ ("`" | "``")?
text-line ::= char* "\n"
block ::= "```" lang "\n" char* "\n```"
lang ::= "python" | "py" | "python3" | ""
char ::= [^`] | "`" [^`] | "``" [^`]
"""
"""The replies this protocol reads, as a GBNF grammar for llama.cpp: text
(answers, action lines), then at most one code block starting on a line of
its own, after which the reply ends. Sent to the embedded model: generation
stops at the block's closing fence instead of running on into an explanation
nobody reads (a sixth of the tokens of a small model's replies), and a
second block or an unclosed one cannot be written."""

FENCE = re.compile(
    r"^[ \t]*```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n(.*?)^[ \t]*```[ \t]*$",
    re.DOTALL | re.MULTILINE,
)
NODE_ID = r"rm_[a-z0-9]{8}"
KEYWORD = re.compile(
    r"^\s*(READ|SEARCH|REFERENCES|MESSAGE|ASK_PARENT|ASK_USER|OPTIONS|CREATE_FILE"
    r"|CHANGE|SUMMARY)\b(.*)$"
)
FORMS = {
    "READ": (re.compile(rf"^:\s*({NODE_ID})\s*$"), "READ: rm_xxxxxxxx"),
    "SEARCH": (re.compile(r"^:\s*(\S.*)$"), "SEARCH: words of a name"),
    "REFERENCES": (re.compile(rf"^:\s*({NODE_ID})\s*$"), "REFERENCES: rm_xxxxxxxx"),
    "MESSAGE": (
        re.compile(rf"^\s+({NODE_ID})\s*:\s*(\S.*)$"),
        "MESSAGE rm_xxxxxxxx: your request",
    ),
    "ASK_PARENT": (re.compile(r"^:\s*(\S.*)$"), "ASK_PARENT: your request"),
    "ASK_USER": (re.compile(r"^:\s*(\S.*)$"), "ASK_USER: your question"),
    "OPTIONS": (re.compile(r"^:\s*(\S.*)$"), "OPTIONS: first | second"),
    "CREATE_FILE": (re.compile(r"^:\s*(\S+)\s*$"), "CREATE_FILE: tests/test_x.py"),
    "CHANGE": (
        re.compile(r"^\s+(\S+?)\s*:?\s*$"),
        "CHANGE rm_xxxxxxxx (or CHANGE path/to/file.py), then its code block",
    ),
    "SUMMARY": (re.compile(r"^:\s*(\S.*)$"), "SUMMARY: what the changes do"),
}
PYTHON_TAGS = {"python", "py", "python3", ""}
CHANGE = re.compile(r"^[ \t]*CHANGE[ \t]+(\S+)[ \t]*$", re.MULTILINE)
"""A ``CHANGE`` line: the target of the code block that follows it."""


class FencedError(ValueError):
    """A reply that does not follow the protocol; the message is for the model."""


@dataclass
class FencedReply:
    """What a reply asks for."""

    code: str | None = None
    reads: list[str] = field(default_factory=list)
    searches: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    messages: list[tuple[str, str]] = field(default_factory=list)
    ask_parent: list[str] = field(default_factory=list)
    question: tuple[str, tuple[str, ...]] | None = None
    new_file: str | None = None
    """``CREATE_FILE``: the path whose content is :attr:`code`."""
    changes: list[tuple[str, str]] = field(default_factory=list)
    """``CHANGE`` blocks: (node id or path, its source)."""
    summary: str = ""
    text: str = ""
    """The reply without its code block: the answer, or the reasoning."""

    @property
    def actions(self) -> bool:
        """Whether the reply asks for anything but an answer."""
        return bool(
            self.code is not None
            or self.changes
            or self.reads
            or self.searches
            or self.references
            or self.messages
            or self.ask_parent
            or self.question
        )


def parse_reply(reply: str) -> FencedReply:
    """Read a model's reply; :class:`FencedError` if it breaks the protocol."""
    parsed = FencedReply()
    blocks = [m for m in FENCE.finditer(reply) if m.group(1).lower() in PYTHON_TAGS]
    if CHANGE.search(reply):
        return _read_changes(parsed, reply, blocks)
    if len(blocks) > 1:
        raise FencedError(
            "Your reply has more than one code block. Reply with exactly one "
            "```python block holding your complete new source."
        )
    outside = reply
    if blocks:
        parsed.code = blocks[0].group(2).rstrip()
        outside = reply[: blocks[0].start()] + reply[blocks[0].end() :]
    elif "```" in reply:
        raise FencedError(
            "Your code block is not closed. Put your complete new source between "
            "a ```python line and a ``` line."
        )
    _read_lines(parsed, outside)
    if parsed.new_file is not None and parsed.code is None:
        raise FencedError(
            "CREATE_FILE needs the file's whole content in one ```python block."
        )
    return parsed


def _read_changes(
    parsed: FencedReply, reply: str, blocks: list[re.Match[str]]
) -> FencedReply:
    """A reply of ``CHANGE`` blocks (``propose_changes``)."""
    outside, at = [], 0
    for block in blocks:
        head = reply[at : block.start()]
        targets = CHANGE.findall(head)
        if not targets:
            raise FencedError(
                "Put a line CHANGE rm_xxxxxxxx (or CHANGE path/to/file.py) right "
                "before each code block."
            )
        parsed.changes.append(
            (targets[-1].strip().rstrip(":"), block.group(2).rstrip())
        )
        outside.append(CHANGE.sub("", head))
        at = block.end()
    outside.append(reply[at:])
    if CHANGE.search(reply[at:]):
        raise FencedError("Each CHANGE line needs its code block after it.")
    _read_lines(parsed, "".join(outside))
    if not parsed.summary:
        raise FencedError("Add a line SUMMARY: what the changes do together.")
    return parsed


def _read_lines(parsed: FencedReply, outside: str) -> None:
    """The action lines and the prose of a reply (code blocks taken out)."""
    prose: list[str] = []
    for line in outside.splitlines():
        match = KEYWORD.match(line)
        if match is None:
            prose.append(line)
            continue
        _read_action(parsed, match.group(1), match.group(2))
    parsed.text = "\n".join(prose).strip()


def _read_action(parsed: FencedReply, keyword: str, rest: str) -> None:
    pattern, form = FORMS[keyword]
    match = pattern.match(rest)
    if match is None:
        raise FencedError(f"Could not read your {keyword} line. Write it as: {form}")
    if keyword == "READ":
        parsed.reads.append(match.group(1))
    elif keyword == "SEARCH":
        parsed.searches.append(match.group(1).strip())
    elif keyword == "REFERENCES":
        parsed.references.append(match.group(1))
    elif keyword == "MESSAGE":
        parsed.messages.append((match.group(1), match.group(2).strip()))
    elif keyword == "ASK_PARENT":
        parsed.ask_parent.append(match.group(1).strip())
    elif keyword == "CREATE_FILE":
        parsed.new_file = match.group(1)
    elif keyword == "SUMMARY":
        parsed.summary = match.group(1).strip()
    elif keyword == "CHANGE":  # outside a CHANGE reply: a line without its block
        raise FencedError("Each CHANGE line needs its code block after it.")
    elif keyword == "ASK_USER":
        if parsed.question is not None:
            raise FencedError("Ask the person one question at a time (one ASK_USER).")
        parsed.question = (match.group(1).strip(), ())
    else:  # OPTIONS
        if parsed.question is None:
            raise FencedError("An OPTIONS line must follow an ASK_USER line.")
        options = tuple(o.strip() for o in match.group(1).split("|") if o.strip())
        parsed.question = (parsed.question[0], options)
