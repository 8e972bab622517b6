"""A file of the user's own for the toy-item tests (and the estimate they solve): an example of the package written into a folder
outside it, its item loaded by ``FILE.py:NAME`` (which registers it), and afterwards the item
unregistered and the module forgotten, so later tests see the registries as they were."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ldpopt import oracles
from ldpopt._userfunc import load_attribute

EXAMPLES = Path(__file__).resolve().parents[1] / "ldpopt" / "examples"


@contextmanager
def user_module(folder: Path, example: str, filename: str, attribute: str, unregister):
    """Write ``examples/<example>`` to ``folder/<filename>`` and yield the object ``attribute`` of it;
    ``unregister()`` runs at exit."""
    (folder / filename).write_text((EXAMPLES / example).read_text(encoding="utf-8"), encoding="utf-8")
    try:
        yield load_attribute(f"{folder / filename}:{attribute}")
    finally:
        unregister()
        for key in [k for k, m in sys.modules.items() if k.startswith("_ldpopt_user_")
                    and str(getattr(m, "__file__", "")).startswith(str(folder))]:
            del sys.modules[key]


#: the toy tests' support counts (×20): a few large values, zeros, a tail
COUNTS = np.array([300, 90, 40, 20, 5, 0, 0, 10, 0, 35, 2, 1]) * 20


def toy_estimate():
    """OUE at ε = 1 on :data:`COUNTS` (seed 7)."""
    return oracles.get("oue", 1.0, COUNTS.size).simulate(COUNTS, 7)
