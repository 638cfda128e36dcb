"""What happens to a proposal, from the agent's reply to the person's decision.

``proposals.py`` is the proposal and its store; ``definition_edits.py``,
``definition_text.py`` and ``indentation.py`` turn an agent's source into an
edit of the file; ``guards.py`` and ``intent.py`` are the intent guard (a
docstring request may change only docstrings); ``source_checks.py``,
``unused_parameters.py`` and ``hidden_chars.py`` check the new source;
``checks.py`` is what was checked, as the person sees it; ``verification/``
runs the project's tests on it; ``decisions.py`` plans, accepts, rejects and
marks proposals stale (the accept use cases that go through an editor are
``front/accepting.py`` and ``front/accept_many.py``); ``edits.py`` is the edit
that applies a proposal; ``diffs.py`` makes the diffs shown.
"""
