"""Privacy accounting of the numbers ldpopt post-processes: the central noise mechanisms on counts
(:mod:`.central`).

Notes: docs/notes/privacy.md.
"""

from __future__ import annotations

from . import central, shuffle

__all__ = ["central", "shuffle"]
