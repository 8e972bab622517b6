"""Fused aggregation kernels: the support counts of every oracle on every core (:mod:`.cpu`) or on a
CUDA GPU (:mod:`.cuda`), bit-identical to the numpy aggregators, which stay the reference.

Three kernels cover the seven oracles: a histogram (GRR; HR before its Walsh–Hadamard transform;
SS over the flattened subsets), the column counts of packed bit vectors (OUE, SUE) and the keyed
hash counts (OLH, BLH). ``oracle.aggregate(reports, device=...)`` validates the reports as before
and hands the counting to :func:`histogram`, :func:`column_counts` or :func:`hash_counts` here.

Devices (``device=``):

* ``"numpy"`` — the numpy aggregators (the reference);
* ``"cpu"`` — the Numba kernels of :mod:`.cpu`, on ``numba.get_num_threads()`` threads;
* ``"cuda"`` — the numba.cuda kernels of :mod:`.cuda` on the current GPU;
* ``None`` or ``"auto"`` (the default) — ``"cpu"`` when Numba is installed and the call counts at
  least ``AUTO_CELLS`` cells (report entries × values), else ``"numpy"``. *Choice*: below that the
  numpy path takes under ~20 ms and the kernels' thread start-up and, in a fresh environment, their
  one-off compilation (cached on disk afterwards, ``cache=True``) are not worth it. Never the GPU
  implicitly.

Numba is optional (the ``kernels`` extra; the ``gpu`` extra adds CuPy for :mod:`.xp`): without it
``"auto"`` is ``"numpy"`` and asking for ``"cpu"`` or ``"cuda"`` is an ``ImportError`` naming the
extra; ``"cuda"`` without a usable GPU is a ``RuntimeError`` saying so.
"""

from __future__ import annotations

import importlib.util
import threading

import numpy as np

__all__ = ["DEVICES", "AUTO_CELLS", "resolve", "histogram", "column_counts", "hash_counts", "numba_available"]

DEVICES = ("auto", "numpy", "cpu", "cuda")
#: cells (report entries × values counted) from which ``device="auto"`` runs the CPU kernels
AUTO_CELLS = 1 << 22

_LOCK = threading.Lock()


def numba_available() -> bool:
    """Whether Numba can be imported (the CPU kernels' only requirement)."""
    return importlib.util.find_spec("numba") is not None


def resolve(device, cells: int = 0) -> str:
    """The device that runs a count of ``cells`` cells: "numpy", "cpu" or "cuda" (module docstring);
    an error naming the argument for anything else, and naming what is missing for an unusable one."""
    if device is None or device == "auto":
        return "cpu" if cells >= AUTO_CELLS and numba_available() else "numpy"
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES} or None, got {device!r}")
    if device == "cpu":
        from .._extras import require

        require("numba", "kernels", "device='cpu' (the fused CPU aggregation kernels)")
    elif device == "cuda":
        from . import cuda

        cuda.check_usable()
    return device


def _run(fn, *args):
    """Call a CPU kernel. Numba's ``workqueue`` threading layer (used when neither OpenMP nor TBB is
    found) aborts the process on concurrent parallel calls, so there the calls are serialised; the
    OpenMP and TBB layers run them concurrently."""
    from .._extras import require

    numba = require("numba", "kernels", "the fused CPU aggregation kernels")
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel kernel has run yet: the layer is not chosen
        layer = "workqueue"
    if layer == "workqueue":
        with _LOCK:
            return fn(*args)
    return fn(*args)


def histogram(y: np.ndarray, size: int, device: str) -> np.ndarray:
    """c[k] = #{i : y[i] = k} for int64 ``y`` already checked to lie in [0, size), on a resolved
    ``device``."""
    if device == "numpy":
        return np.bincount(y, minlength=size).astype(np.int64)
    if device == "cuda":
        from . import cuda

        return cuda.histogram(y, size)
    from . import cpu

    return _run(cpu.histogram, y, size)


def column_counts(packed: np.ndarray, d: int, device: str) -> np.ndarray:
    """Set bits per bit column of packed (m, ⌈d/8⌉) uint8 rows, first d columns, on a resolved
    ``device``."""
    if device == "numpy":
        from ..oracles.unary import column_counts as reference

        return reference(np.ascontiguousarray(packed), d)
    if device == "cuda":
        from . import cuda

        return cuda.column_counts(packed, d)
    from . import cpu

    return _run(cpu.column_counts, packed, d)


def hash_counts(keys: np.ndarray, r: np.ndarray, d: int, g: int, device: str) -> np.ndarray:
    """OLH's support counts from int64 keys and reports r ∈ [0, g), on ``device`` "cpu" or "cuda"
    (the numpy reference stays in ``OLH.aggregate``)."""
    if device == "cuda":
        from . import cuda

        return cuda.hash_counts(keys, r, d, g)
    from . import cpu

    return _run(cpu.hash_counts, keys, r, d, g)
