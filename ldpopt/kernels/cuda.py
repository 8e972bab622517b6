"""The aggregation kernels on a CUDA GPU (numba.cuda), from the same scalar source as the CPU ones
(:mod:`.scalar`: SplitMix64 and the divisibility test are compiled as device functions), with the
same counts bit for bit (integer sums).

* :func:`hash_counts` (OLH, BLH) — one thread per value; the users pass through shared memory in
  tiles of ``TILE`` keys and reports, loaded once per block and read by all its threads (the layout
  of a tiled matrix product: the n·d hash evaluations are compute-bound, the n reports are read
  ⌈d/TILE⌉ times from global memory instead of d times);
* :func:`histogram` (GRR, HR, SS) — a grid-stride loop of 64-bit ``atomic.add`` into the counts;
* :func:`column_counts` (OUE, SUE) — one thread per bit column, summing its bit over the rows
  (neighbouring threads read the same or neighbouring bytes of a row: coalesced).

Every call copies its reports to the device and the counts back (``numba.cuda.to_device``);
``ldpopt.aggregate.shards`` reads the next Parquet row group while the current one is counted.

Tested without a GPU under Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, small cases,
``tests/test_kernels_cuda.py``); the same tests run on the real device where one is present.
"""

from __future__ import annotations

import functools

import numpy as np

from .scalar import GAMMA, congruent, divisibility_constants, mix64

__all__ = ["check_usable", "histogram", "column_counts", "hash_counts", "TILE"]

#: threads per block, and users per shared-memory tile of hash_counts
TILE = 256


# numba.cuda, bound on first use: a module global, because the CUDA simulator swaps the kernels'
# global reference to it for its own (a closure variable would escape the swap)
cuda = None
types = None


def _numba_cuda():
    global cuda, types
    try:
        from numba import cuda, types
    except ImportError as e:
        raise ImportError("device='cuda' needs the package 'numba' (with its CUDA target), which is not "
                          "installed; install ldpopt's 'gpu' extra: pip install 'ldpopt[gpu]' (in a "
                          "checkout: pip install '.[gpu]')") from e
    return cuda


def check_usable() -> None:
    """Raise, naming what is missing, unless the CUDA kernels can run here: an ``ImportError`` without
    Numba, a ``RuntimeError`` when Numba finds no usable GPU (no device, no driver, or no CUDA
    toolkit)."""
    cuda = _numba_cuda()
    try:
        ok = cuda.is_available()
    except Exception as e:  # a broken driver or toolkit raises instead of answering False
        raise RuntimeError(f"device='cuda' needs a usable CUDA GPU; numba.cuda failed: {e}") from e
    if not ok:
        raise RuntimeError("device='cuda' needs a CUDA GPU with its driver, and numba's CUDA target finds "
                           "none here (numba.cuda.is_available() is False); use device='cpu' or 'numpy'")


@functools.lru_cache(maxsize=1)
def _kernels():
    _numba_cuda()

    mix = cuda.jit(device=True)(mix64)
    cong = cuda.jit(device=True)(congruent)

    @cuda.jit
    def hist(y, counts):
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < y.shape[0]:
            cuda.atomic.add(counts, y[i], 1)
            i += stride

    @cuda.jit
    def cols(packed, counts):
        c = cuda.grid(1)
        if c < counts.shape[0]:
            j = c // 8
            sh = 7 - c % 8
            s = 0
            for i in range(packed.shape[0]):
                s += (packed[i, j] >> sh) & 1
            counts[c] = s

    @cuda.jit
    def olh(keys, r, vg, mask, inv, rot, lim, pow2, counts):
        sk = cuda.shared.array(TILE, types.uint64)
        sr = cuda.shared.array(TILE, types.uint64)
        tx = cuda.threadIdx.x
        v = cuda.grid(1)
        n, d = keys.shape[0], vg.shape[0]
        h = vg[min(v, d - 1)]
        c = 0
        for t0 in range(0, n, TILE):
            if t0 + tx < n:
                sk[tx] = keys[t0 + tx]
                sr[tx] = r[t0 + tx]
            cuda.syncthreads()
            m = min(TILE, n - t0)
            if v < d:
                for i in range(m):
                    z = mix(sk[i] + h)
                    if pow2:
                        hit = (z & mask) == sr[i]
                    else:
                        hit = cong(z, sr[i], inv, rot, lim)
                    if hit:
                        c += 1
            cuda.syncthreads()
        if v < d:
            counts[v] = c

    return hist, cols, olh


def _blocks(n: int) -> int:
    return max(1, -(-n // TILE))


def histogram(y: np.ndarray, size: int) -> np.ndarray:
    """c[k] = #{i : y[i] = k} on the GPU; ``y`` int64, already checked to lie in [0, size)."""
    cuda = _numba_cuda()
    hist = _kernels()[0]
    y = np.ascontiguousarray(y, dtype=np.int64)
    out = cuda.to_device(np.zeros(size, np.int64))
    if y.shape[0]:
        hist[min(_blocks(y.shape[0]), 4096), TILE](cuda.to_device(y), out)
    return out.copy_to_host()


def column_counts(packed: np.ndarray, d: int) -> np.ndarray:
    """Set bits of each of the first ``d`` bit columns of packed (m, ⌈d/8⌉) uint8 rows, on the GPU."""
    cuda = _numba_cuda()
    cols = _kernels()[1]
    packed = np.ascontiguousarray(packed, dtype=np.uint8)
    out = cuda.to_device(np.zeros(8 * packed.shape[1], np.int64))
    cols[_blocks(8 * packed.shape[1]), TILE](cuda.to_device(packed), out)
    return out.copy_to_host()[:d]


def hash_counts(keys: np.ndarray, r: np.ndarray, d: int, g: int) -> np.ndarray:
    """OLH's support counts c_v = #{i : mix64(s_i + (v + 1)·γ) mod g = r_i} on the GPU (int64 keys
    read as uint64 bit patterns; r already checked to lie in [0, g))."""
    cuda = _numba_cuda()
    olh = _kernels()[2]
    k = np.ascontiguousarray(keys, dtype=np.int64).view(np.uint64)
    ru = np.ascontiguousarray(r).astype(np.uint64)
    vg = np.arange(1, d + 1, dtype=np.uint64) * GAMMA
    inv, rot, lim = divisibility_constants(g)
    out = cuda.to_device(np.zeros(d, np.int64))
    with np.errstate(over="ignore"):  # the simulator runs the uint64 arithmetic on numpy scalars
        olh[_blocks(d), TILE](cuda.to_device(k), cuda.to_device(ru), cuda.to_device(vg), np.uint64(g - 1),
                              inv, rot, lim, bool(g & (g - 1) == 0), out)
    return out.copy_to_host()
