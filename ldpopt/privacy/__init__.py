"""Privacy accounting of the numbers ldpopt post-processes: the central noise mechanisms on counts
(:mod:`.central`), the shuffle model's central (ε, δ) (:mod:`.shuffle`), and the statement every
estimate carries, with composition over rounds (:mod:`.statement`).

Notes: docs/notes/privacy.md.
"""

from __future__ import annotations

from . import central, shuffle, statement

__all__ = ["central", "shuffle", "statement"]
