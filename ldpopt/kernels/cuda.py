"""The aggregation kernels on a CUDA GPU (numba.cuda), from the same scalar source as the CPU ones
(:mod:`.scalar`: SplitMix64 and the divisibility test are compiled as device functions), with the
same counts bit for bit (integer sums).

Notes: docs/notes/devices.md, "ldpopt.kernels.cuda"."""

from __future__ import annotations

import functools
import threading

import numpy as np

from .scalar import GAMMA, congruent, divisibility_constants, mix64

__all__ = ["TILE", "Lane", "check_usable", "column_counts", "hash_counts", "histogram", "lane"]

#: threads per block, and users per shared-memory tile of hash_counts
TILE = 256


# numba.cuda, bound on first use: a module global, because the CUDA simulator swaps the kernels'
# global reference to it for its own (a closure variable would escape the swap)
cuda = None
types = None


def _numba_cuda():
    """numba.cuda (an ``ImportError`` naming the extra without it), bound to the module global on
    first use only: under the simulator a kernel of another host thread may hold the global swapped."""
    global cuda, types
    try:
        from numba import cuda as api
        from numba import types as numba_types
    except ImportError as e:
        raise ImportError("device='cuda' needs the package 'numba' (with its CUDA target), which is not "
                          "installed; install ldpopt's 'gpu' extra: pip install 'ldpopt[gpu]' (in a "
                          "checkout: pip install '.[gpu]')") from e
    if cuda is None:
        cuda, types = api, numba_types
    return api


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
    def cols(packed, counts, rows_per_block):
        c = cuda.grid(1)
        r0 = cuda.blockIdx.y * rows_per_block
        r1 = min(r0 + rows_per_block, packed.shape[0])
        if c < counts.shape[0]:
            j = c // 8
            sh = 7 - c % 8
            s = 0
            for i in range(r0, r1):
                s += (packed[i, j] >> sh) & 1
            if s:
                cuda.atomic.add(counts, c, s)

    @cuda.jit
    def olh(keys, r, vg, mask, inv, rot, lim, pow2, counts, users_per_block):
        sk = cuda.shared.array(TILE, types.uint64)
        sr = cuda.shared.array(TILE, types.uint64)
        tx = cuda.threadIdx.x
        v = cuda.grid(1)
        n, d = keys.shape[0], vg.shape[0]
        u0 = cuda.blockIdx.y * users_per_block
        u1 = min(u0 + users_per_block, n)
        h = vg[min(v, d - 1)]
        c = 0
        for t0 in range(u0, u1, TILE):
            if t0 + tx < u1:
                sk[tx] = keys[t0 + tx]
                sr[tx] = r[t0 + tx]
            cuda.syncthreads()
            m = min(TILE, u1 - t0)
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
        if v < d and c:
            cuda.atomic.add(counts, v, c)

    return hist, cols, olh


def _blocks(n: int) -> int:
    return max(1, -(-n // TILE))


#: threads a launch aims at: enough to fill a large GPU (an H100 holds 132 × 2,048 resident threads)
#: several times over, so that a narrow output (d values or bit columns) still keeps it busy
TARGET_THREADS = 1 << 20


def _split(items: int, width: int, least: int = TILE) -> tuple[int, int]:
    """Split ``items`` rows (users, report rows) over the y dimension of a grid whose x dimension
    covers ``width`` outputs (one thread each): (blocks along y, items per y block), so that x × y
    threads reach about :data:`TARGET_THREADS`, each y block keeps at least ``least`` items, and y
    stays within CUDA's 65,535. Each y block adds its partial count with one atomic add per output
    (integer sums: the same counts in any order)."""
    ys = max(1, min(-(-TARGET_THREADS // (_blocks(width) * TILE)), -(-items // least), 65535))
    per = max(1, -(-items // ys))
    return -(-max(items, 1) // per), per


class Lane:
    """One host thread's CUDA stream and pinned staging buffers (module notes). ``api``: the
    numba.cuda module (its ``stream``, ``pinned_array`` and ``to_device``; a test passes a recorder).

    Order within a call: :meth:`stage` copies each input into its pinned buffer (host memory) and
    queues the asynchronous copy to the device on the stream; the kernel is queued on the same
    stream; :meth:`result` queues the copy of the counts back and waits for the stream. A stream runs
    its work in order, and the next call of the lane writes a pinned buffer only after that wait."""

    def __init__(self, api):
        self.api = api
        self.stream = api.stream()
        self._pinned = {}

    def stage(self, name: str, arr: np.ndarray):
        """``arr`` on the device, copied through the lane's pinned buffer ``name`` (asynchronous)."""
        buf = self._pinned.get(name)
        if buf is None or buf.size < arr.size or buf.dtype != arr.dtype:
            buf = self.api.pinned_array(max(arr.size, 1), dtype=arr.dtype)
            self._pinned[name] = buf
        view = buf[:arr.size].reshape(arr.shape)
        np.copyto(view, arr)
        return self.api.to_device(view, stream=self.stream)

    def zeros(self, size: int):
        """A zeroed int64 device array of ``size`` counts, written on the lane's stream."""
        return self.api.to_device(np.zeros(size, np.int64), stream=self.stream)

    def result(self, out) -> np.ndarray:
        """The device counts ``out`` on the host, once everything queued on the stream has run."""
        host = out.copy_to_host(stream=self.stream)
        self.stream.synchronize()
        return host


_LANES = threading.local()
_SIMULATED = threading.Lock()


def _launching():
    """The context a kernel is built and queued in: a lock under Numba's CUDA simulator, which runs
    one kernel at a time in a process (it refuses concurrent ones, and swaps this module's ``cuda``
    while one runs), nothing on a GPU."""
    import contextlib

    from .._extras import require

    config = require("numba", "kernels", "device='cuda'").config
    return _SIMULATED if config.ENABLE_CUDASIM else contextlib.nullcontext()


def lane() -> Lane:
    """This host thread's :class:`Lane` (created on first use)."""
    got = getattr(_LANES, "lane", None)
    if got is None:
        got = _LANES.lane = Lane(_numba_cuda())
    return got


def histogram(y: np.ndarray, size: int) -> np.ndarray:
    """c[k] = #{i : y[i] = k} on the GPU; ``y`` int64, already checked to lie in [0, size)."""
    y = np.ascontiguousarray(y, dtype=np.int64)
    ln = lane()
    out = ln.zeros(size)
    if y.shape[0]:
        with _launching():
            hist = _kernels()[0]
            hist[min(_blocks(y.shape[0]), 4096), TILE, ln.stream](ln.stage("y", y), out)
    return ln.result(out)


def column_counts(packed: np.ndarray, d: int) -> np.ndarray:
    """Set bits of each of the first ``d`` bit columns of packed (m, ⌈d/8⌉) uint8 rows, on the GPU."""
    packed = np.ascontiguousarray(packed, dtype=np.uint8)
    ln = lane()
    out = ln.zeros(8 * packed.shape[1])
    ys, per = _split(packed.shape[0], 8 * packed.shape[1])
    with _launching():
        cols = _kernels()[1]
        cols[(_blocks(8 * packed.shape[1]), ys), TILE, ln.stream](ln.stage("packed", packed), out, per)
    return ln.result(out)[:d]


def hash_counts(keys: np.ndarray, r: np.ndarray, d: int, g: int) -> np.ndarray:
    """OLH's support counts c_v = #{i : mix64(s_i + (v + 1)·γ) mod g = r_i} on the GPU (int64 keys
    read as uint64 bit patterns; r already checked to lie in [0, g))."""
    k = np.ascontiguousarray(keys, dtype=np.int64).view(np.uint64)
    ru = np.ascontiguousarray(r).astype(np.uint64)
    vg = np.arange(1, d + 1, dtype=np.uint64) * GAMMA
    inv, rot, lim = divisibility_constants(g)
    ln = lane()
    out = ln.zeros(d)
    ys, per = _split(k.shape[0], d)
    with np.errstate(over="ignore"), _launching():  # the simulator: uint64 arithmetic on numpy scalars
        olh = _kernels()[2]
        olh[(_blocks(d), ys), TILE, ln.stream](ln.stage("keys", k), ln.stage("r", ru), ln.stage("vg", vg),
                                               np.uint64(g - 1), inv, rot, lim, bool(g & (g - 1) == 0), out, per)
    return ln.result(out)
