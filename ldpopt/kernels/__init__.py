"""Fused aggregation kernels: the support counts of every oracle on every core (:mod:`.cpu`) or on a
CUDA GPU (:mod:`.cuda`), bit-identical to the numpy aggregators, which stay the reference.

Notes: docs/notes/devices.md, "ldpopt.kernels"."""

from __future__ import annotations

import importlib.util
import threading

import numpy as np

from . import _moved

_moved.install()  # the closed forms' old paths (ldpopt.kernels.xp* → ldpopt.xp), one release

__all__ = [
    "AUTO_CELLS",
    "histogram",
    "precompile",
    "resolve",
]

DEVICES = ("auto", "numpy", "cpu", "cuda")
#: cells (report entries × values counted) from which ``device="auto"`` runs the CPU kernels
AUTO_CELLS = 1 << 22

_LOCK = threading.Lock()


def numba_available() -> bool:
    """Whether Numba can be imported (the CPU kernels' only requirement).

    Returns
    -------
    bool

    Examples
    --------
    >>> from ldpopt import kernels
    >>> isinstance(kernels.numba_available(), bool)
    True
    """
    return importlib.util.find_spec("numba") is not None


def resolve(device, cells: int = 0) -> str:
    """The device that runs a count of ``cells`` cells: "numpy", "cpu" or "cuda" (module notes);
    an error naming the argument for anything else, and naming what is missing for an unusable one.

    Parameters
    ----------
    device : {None, "auto", "numpy", "cpu", "cuda"}
        The device asked for; None and "auto" choose (module notes).
    cells : int, default 0
        Report entries × values the count touches (``"auto"`` picks "cpu" from ``AUTO_CELLS`` on).

    Returns
    -------
    str
        "numpy", "cpu" or "cuda".

    Raises
    ------
    ValueError
        ``device`` is not one of :data:`DEVICES` or None.
    ImportError
        "cpu" or "cuda" without Numba (the ``kernels`` extra).
    RuntimeError
        "cuda" without a usable GPU.

    Examples
    --------
    >>> from ldpopt import kernels
    >>> kernels.resolve(None), kernels.resolve("numpy")
    ('numpy', 'numpy')
    >>> kernels.resolve("auto", cells=1 << 23) == ("cpu" if kernels.numba_available() else "numpy")
    True
    """
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


def precompile() -> list[str]:
    """Compile ldpopt's Numba kernels into Numba's on-disk cache, by one call of each public function
    on a tiny input (the argument types they pass their kernels): a later process loads them instead
    of compiling. The CPU aggregation kernels (:mod:`.cpu`) take ~30 s of CPU to compile, their
    parallel loops most of it; the report kernels of the poisoning attacks (:mod:`.cpu_reports`), the
    sketches' (:mod:`.sketch`) and the ridge and LASSO solvers' (:mod:`.ridge`) ~11 s more.
    ``make``'s install step runs this once, as pip compiles bytecode. The hashed counts run on two
    kernels, one chunking the users and one not (which one depends on the reports and the threads,
    :func:`.cpu.hash_counts`): both are called where this machine has two threads or more (on one,
    only the second ever runs).

    Returns
    -------
    list of str
        The kernels compiled or loaded, by module and name; empty without Numba (nothing to compile).

    Examples
    --------
    >>> from ldpopt import kernels
    >>> "cpu.histogram" in kernels.precompile() or not kernels.numba_available()  # doctest: +SKIP
    True

    (Skipped when the docstrings run: tens of seconds in a fresh environment.)
    """
    if not numba_available():
        return []
    from . import cpu, cpu_reports, ridge, sketch

    rng = np.random.default_rng(0)
    cpu.histogram_checked(np.array([0, 1, 1], dtype=np.int64), 3)
    cpu.subset_counts_checked(np.array([[0, 1], [1, 2]], dtype=np.int64), 3)
    cpu.column_counts(np.packbits(rng.integers(0, 2, size=(4, 16)).astype(bool), axis=1), 16)
    keys = rng.integers(0, 2**63, size=4096, dtype=np.int64)
    cpu.hash_counts(keys[:1], np.zeros(1, dtype=np.int64), 8, 4)  # one report: the users not chunked
    cpu.hash_counts(keys, rng.integers(0, 4, size=4096), 8, 4)  # 4,096: chunked on two threads or more
    cpu_reports.hash_row_counts(keys[:4], np.zeros(4, dtype=np.int64), np.arange(3), 4)
    cpu_reports.best_bucket_keys(keys[:6].reshape(2, 3), np.arange(2), 4)
    sketch.grouped_bit_sums(np.array([0, 1]), np.zeros((2, 3), dtype=bool), 2)
    sketch.signed_cell_sums(np.array([[0, 0, 1]]), 1, 1)
    sketch.fwht_rows(np.ones((1, 2), dtype=np.int64))
    indptr, indices = np.array([0, 1, 2]), np.array([0, 1])  # the 2 x 2 identity, CSC
    ridge.coordinate_descent(indptr, indices, np.ones(2), np.ones(2), 1.0)
    ridge.lasso_support(indptr, indices, np.ones(2), 0.1)
    # the functions these calls compiled or loaded (their dispatchers' signatures)
    return sorted(f"{mod.__name__.rsplit('.', 1)[-1]}.{name.lstrip('_')}" for mod in (cpu, cpu_reports, ridge, sketch)
                  for name, fn in vars(mod).items() if getattr(fn, "signatures", None))


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
    ``device``.

    Parameters
    ----------
    y : ndarray of int64
        Values, already checked to lie in [0, size).
    size : int
        Number of bins.
    device : str
        A resolved device: "numpy", "cpu" or "cuda".

    Returns
    -------
    ndarray of int64, shape (size,)

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import kernels
    >>> kernels.histogram(np.array([0, 2, 2, 3]), 5, "numpy")
    array([1, 0, 2, 1, 0])
    >>> kernels.histogram(np.array([0, 2, 2, 3]), 5, "cpu")  # doctest: +SKIP
    array([1, 0, 2, 1, 0])

    (Skipped when the docstrings run: the Numba kernels take seconds to load, and tens of seconds
    to compile in a fresh environment; the output shown is theirs.)
    """
    if device == "numpy":
        return np.bincount(y, minlength=size).astype(np.int64)
    if device == "cuda":
        from . import cuda

        return cuda.histogram(y, size)
    from . import cpu

    return _run(cpu.histogram, y, size)


def checked_histogram(values, size: int, name: str, device) -> np.ndarray:
    """:func:`histogram` of user-supplied ``values`` with ``check_values``'s checks (integers in
    [0, size), 1-D, non-empty) and errors. On the CPU kernels a 1-D int64 array is range-checked
    inside the counting pass (one pass instead of numpy's four: two comparisons, the copy, the
    count); only when an entry is out of range does ``check_values`` run, to raise its error.

    Parameters
    ----------
    values : array_like of int
        User-supplied values.
    size : int
        Number of bins.
    name : str
        The argument's name in error messages.
    device : str or None
        As in :func:`resolve`.

    Returns
    -------
    ndarray of int64, shape (size,)

    Raises
    ------
    ValueError
        ``values`` empty, not 1-D, not integers or outside [0, size), naming ``name``.

    Examples
    --------
    >>> from ldpopt import kernels
    >>> kernels.checked_histogram([0, 2, 2, 3], 5, "values", None)
    array([1, 0, 2, 1, 0])
    >>> kernels.checked_histogram([0, 7], 5, "values", None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: values must be integers in [0, 5); entry 1 is ...7...
    """
    from .._validation import check_values

    arr = values if isinstance(values, np.ndarray) else np.asarray(values)
    dev = resolve(device, arr.size)
    if dev == "cpu" and arr.ndim == 1 and arr.size and arr.dtype == np.int64:
        from . import cpu

        counts, bad = _run(cpu.histogram_checked, arr, size)
        if not bad:
            return counts
    return histogram(check_values(arr, size, name), size, dev)


def subset_counts_checked(r: np.ndarray, size: int) -> tuple[np.ndarray, int]:
    """SS's counts of (m, k) int64 subsets with its checks fused, on the CPU kernels: (counts, the
    number of entries out of range or repeated within their row); see :mod:`.cpu`.

    Parameters
    ----------
    r : ndarray of int64, shape (m, k)
        Subset Selection reports, one k-subset per row.
    size : int
        The domain size d.

    Returns
    -------
    counts : ndarray of int64, shape (size,)
    bad : int
        Entries out of range or repeated within their row (0 for valid reports).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import kernels
    >>> kernels.subset_counts_checked(np.array([[0, 1], [1, 2]]), 4)  # doctest: +SKIP
    (array([1, 2, 1, 0]), 0)

    (Skipped when the docstrings run: the Numba kernels take seconds to load, and tens of seconds
    to compile in a fresh environment; the output shown is theirs.)
    """
    from . import cpu

    return _run(cpu.subset_counts_checked, r, size)


def column_counts(packed: np.ndarray, d: int, device: str) -> np.ndarray:
    """Set bits per bit column of packed (m, ⌈d/8⌉) uint8 rows, first d columns, on a resolved
    kernel ``device`` ("cpu" or "cuda"; the numpy reference is ``oracles.unary.column_counts``,
    which the oracle calls itself, so this package never imports the oracles).

    Parameters
    ----------
    packed : ndarray of uint8, shape (m, ceil(d/8))
        Bit vectors packed with ``np.packbits(..., axis=1)``.
    d : int
        Number of bit columns.
    device : str
        A resolved device (:func:`resolve`): "cpu" or "cuda".

    Returns
    -------
    ndarray of int64, shape (d,)

    Raises
    ------
    ValueError
        ``device="numpy"`` (the numpy path is the oracle's own).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import kernels
    >>> packed = np.packbits(np.array([[1, 0, 1], [1, 1, 0]], dtype=bool), axis=1)
    >>> kernels.column_counts(packed, 3, "cpu")  # doctest: +SKIP
    array([2, 1, 1])

    (Skipped when the docstrings run: the Numba kernels take seconds to load, and tens of seconds
    to compile in a fresh environment; the output shown is theirs.)
    """
    if device == "numpy":
        raise ValueError("device: 'numpy' is the oracle's own path (oracles.unary.column_counts)")
    if device == "cuda":
        from . import cuda

        return cuda.column_counts(packed, d)
    from . import cpu

    return _run(cpu.column_counts, packed, d)


def hash_counts(keys: np.ndarray, r: np.ndarray, d: int, g: int, device: str) -> np.ndarray:
    r"""OLH's support counts from int64 keys and reports r ∈ [0, g), on ``device`` "cpu" or "cuda"
    (the numpy reference stays in ``OLH.aggregate``).

    Parameters
    ----------
    keys : ndarray of int64, shape (m,)
        Each report's hash key s.
    r : ndarray of int64, shape (m,)
        Each report's bucket, in [0, g).
    d : int
        Domain size.
    g : int
        Number of buckets.
    device : str
        A resolved device (:func:`resolve`): "cpu" or "cuda".

    Returns
    -------
    ndarray of int64, shape (d,)
        :math:`c_v = \#\{i : H_{s_i}(v) = r_i\}`.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import kernels
    >>> kernels.hash_counts(np.array([1, 2, 3]), np.array([0, 1, 0]), 5, 2, "cpu")  # doctest: +SKIP
    array([0, 0, 2, 0, 2])

    (Skipped when the docstrings run: the Numba kernels take seconds to load, and tens of seconds
    to compile in a fresh environment; the output shown is theirs.)
    """
    if device == "cuda":
        from . import cuda

        return cuda.hash_counts(keys, r, d, g)
    from . import cpu

    return _run(cpu.hash_counts, keys, r, d, g)


def _cpu_only(device: str, what: str) -> None:
    if device != "cpu":
        raise ValueError(f"device: {what} runs on 'cpu' here (its numpy reference is the caller's own path), "
                         f"got {device!r}")


def hash_row_counts(keys: np.ndarray, r: np.ndarray, values: np.ndarray, g: int, device: str) -> np.ndarray:
    r"""Per OLH/BLH report :math:`(s_i, r_i)`, :math:`\#\{v ∈ V : H_{s_i}(v) = r_i\}` (V = ``values``), on ``device`` "cpu"
    (:mod:`.cpu_reports`; the numpy references are ``robust.support_sizes`` and ``robust.suspect_scores``).

    Parameters
    ----------
    keys : ndarray of int64, shape (m,)
        Each report's hash key.
    r : ndarray of int64, shape (m,)
        Each report's bucket.
    values : ndarray of int64
        The values counted.
    g : int
        Number of buckets.
    device : str
        Must be "cpu".

    Returns
    -------
    ndarray of int64, shape (m,)

    Raises
    ------
    ValueError
        ``device`` is not "cpu".

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import kernels
    >>> kernels.hash_row_counts(np.array([1, 2, 3]), np.array([0, 1, 0]), np.arange(5), 2, "cpu")  # doctest: +SKIP
    array([1, 2, 1])

    (Skipped when the docstrings run: the Numba kernels take seconds to load, and tens of seconds
    to compile in a fresh environment; the output shown is theirs.)
    """
    _cpu_only(device, "the per-report hash counts")
    from . import cpu_reports

    return _run(cpu_reports.hash_row_counts, keys, r, values, g)


def best_bucket_keys(keys: np.ndarray, targets: np.ndarray, g: int, device: str) -> tuple[np.ndarray, np.ndarray]:
    """The maximal gain attack's key search on OLH/BLH (:mod:`.cpu_reports`) on ``device`` "cpu"; the
    numpy reference is ``robust.attacks._olh_search``.

    Parameters
    ----------
    keys : ndarray of int64, shape (users, candidates)
        Candidate hash keys per fake user.
    targets : ndarray of int64
        The target values.
    g : int
        Number of buckets.
    device : str
        Must be "cpu".

    Returns
    -------
    keys, buckets : ndarray of int64, shape (users,)
        Per user, the first key whose largest target bucket is largest, and that bucket (the
        smallest of that size).

    Raises
    ------
    ValueError
        ``device`` is not "cpu", or ``keys`` not 2-D with at least one candidate.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import kernels
    >>> kernels.best_bucket_keys(np.arange(10).reshape(2, 5), np.array([0, 1, 2]), 4, "cpu")  # doctest: +SKIP
    (array([3, 8]), array([1, 1]))

    (Skipped when the docstrings run: the Numba kernels take seconds to load, and tens of seconds
    to compile in a fresh environment; the output shown is theirs.)
    """
    _cpu_only(device, "the key search of the maximal gain attack")
    from . import cpu_reports

    return _run(cpu_reports.best_bucket_keys, keys, targets, g)
