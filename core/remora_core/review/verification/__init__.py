"""Verification of proposals by the project's own tests (DESIGN §9).

``selection.py`` finds the tests that reach a node, ``copying.py`` makes the
temporary copy they run in, ``pytest_run.py`` runs them, and ``verifier.py``
ties it together: queueing, outcomes on the proposal, one retry on failure.
"""

from __future__ import annotations

from remora_core.review.verification.verifier import Verifier

__all__ = ["Verifier"]
