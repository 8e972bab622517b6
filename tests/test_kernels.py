"""The fused CPU aggregation kernels (ldpopt.kernels.cpu) give the numpy aggregators' counts bit for
bit: every oracle, several seeds, sizes and ε, the edge sizes (n = 0 and 1, d = 2, g = 2, a d not a
multiple of 8, g a power of two and not), and whatever the thread count or the split of the work.
Small cases only: the kernels compile once per environment (cached on disk)."""

from __future__ import annotations

import numpy as np
import pytest

from ldpopt import kernels, oracles
from ldpopt.oracles.channel import Channel
from ldpopt.oracles.hashing import keyed_hash

numba = pytest.importorskip("numba", reason="the CPU kernels need numba (the 'kernels' extra)")
from ldpopt.kernels import cpu  # noqa: E402
from ldpopt.kernels.scalar import congruent, divisibility_constants  # noqa: E402

CASES = [  # (oracle, ε, d, n)
    ("grr", 1.0, 2, 1), ("grr", 0.5, 97, 3000), ("grr", 4.0, 5000, 20000),
    ("oue", 1.0, 2, 1), ("oue", 1.0, 13, 2500), ("oue", 2.0, 4100, 700),
    ("sue", 0.5, 64, 3000), ("sue", 3.0, 1001, 400),
    ("olh", 1.0, 2, 1), ("olh", 1.0, 300, 3000), ("olh", 4.0, 777, 1500), ("olh", 8.0, 130, 2100),
    ("blh", 1.0, 2, 2049), ("blh", 0.3, 129, 900),
    ("hr", 1.0, 2, 1), ("hr", 1.0, 1000, 5000),
    ("ss", 1.0, 2, 1), ("ss", 1.0, 60, 3000), ("ss", 0.2, 50, 500),
]


@pytest.mark.parametrize("name,eps,d,n", CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_cpu_kernel_counts_equal_numpy(name, eps, d, n, seed):
    gen = np.random.default_rng(seed)
    orc = oracles.get(name, eps, d)
    reports = orc.perturb(gen.integers(0, d, n), gen)
    ref = orc.aggregate(reports, device="numpy")
    got = orc.aggregate(reports, device="cpu")
    assert got.dtype == np.int64 and np.array_equal(got, ref), (name, eps, d, n)
    assert np.array_equal(orc.aggregate(reports), ref)  # auto: numpy or the kernel, same counts


def test_hash_counts_g_two_power_and_odd_and_large_g_equal_keyed_hash():
    gen = np.random.default_rng(5)
    n, d = 700, 67
    keys = gen.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=n, dtype=np.int64, endpoint=True)
    for g in (2, 3, 4, 6, 56, 57, 1 << 20, (1 << 30) - 1, 1 << 30):
        h = keyed_hash(keys[:, None], np.arange(d)[None, :], g)  # (n, d), the reference hash
        r = h[:, 7]  # every user supports value 7, and others by collision
        want = (h == r[:, None]).sum(axis=0)
        assert np.array_equal(cpu.hash_counts(keys, r, d, g), want), g
        assert cpu.hash_counts(keys, r, d, g)[7] == n


def test_congruence_test_equals_mod_on_edge_words():
    """Every z below g (where z − r wraps), including z = r − (2^64 mod g), whose wrapped difference
    is a multiple of g, and words at the top of the range; g odd, even, a power of two, above 2^32."""
    top = [2**63, 2**64 - 1, 2**64 - 2, 2**64 - 56, 12345678901234567]
    with np.errstate(over="ignore"):
        for g in (1, 2, 3, 7, 12, 56, 57, 1 << 30, 3 << 28, 2**32 + 1):
            inv, rot, lim = divisibility_constants(g)
            z = np.array(sorted(set(range(min(g, 200))) | set(top)), dtype=np.uint64)
            m = (1 << 64) % g
            for r in sorted({0, min(1, g - 1), m, g // 2, g - 1, min(m + 3, g - 1)}):  # r in [0, g)
                want = z % np.uint64(g) == np.uint64(r)
                got = np.array([bool(congruent(x, np.uint64(r), inv, rot, lim)) for x in z])
                assert np.array_equal(got, want), (g, r)
    with pytest.raises(ValueError, match="g must be"):
        divisibility_constants(0)


@pytest.mark.parametrize("d", [1, 8, 63, 64, 65, 1000, 16_384 * 2 + 72])
def test_column_counts_every_branch_of_the_carry_save_count(d):
    """Random bytes (every bit pattern, not only one-hot-like reports): row counts below one group of
    16, with a remainder, past the vertical counter's flush (255 groups = 4,080 rows), d with a
    partial last word, and d spanning three word blocks of a task (16,384 columns each)."""
    gen = np.random.default_rng(d)
    nb = (d + 7) // 8
    for m in (1, 15, 16, 17, 4080, 4096 + 33) if d < 20_000 else (17, 4096 + 33):
        rep = gen.integers(0, 256, (m, nb), dtype=np.uint8)
        expected = np.unpackbits(rep, axis=1)[:, :d].sum(axis=0, dtype=np.int64)  # independent of both
        assert np.array_equal(cpu.column_counts(rep, d), expected), (d, m)


def test_empty_reports_give_zero_counts():
    assert np.array_equal(cpu.histogram(np.zeros(0, np.int64), 5), np.zeros(5, np.int64))
    assert np.array_equal(cpu.column_counts(np.zeros((0, 2), np.uint8), 13), np.zeros(13, np.int64))
    assert np.array_equal(cpu.hash_counts(np.zeros(0, np.int64), np.zeros(0, np.int64), 9, 4), np.zeros(9, np.int64))


def test_counts_do_not_depend_on_thread_count_or_split():
    gen = np.random.default_rng(3)
    olh = oracles.get("olh", 1.0, 5)  # narrow: the users are split across threads (partial rows)
    rep = olh.perturb(gen.integers(0, 5, 5000), gen)
    oue = oracles.get("oue", 1.0, 9)
    rep_u = oue.perturb(gen.integers(0, 9, 5000), gen)
    before = numba.get_num_threads()
    try:
        got = []
        for t in sorted({1, before}):
            numba.set_num_threads(t)
            got.append((cpu.hash_counts(rep[:, 0], rep[:, 1], 5, olh.g), cpu.column_counts(rep_u, 9),
                        cpu.histogram(rep[:, 1], olh.g)))
    finally:
        numba.set_num_threads(before)
    for a, b in zip(got[0], got[-1]):
        assert np.array_equal(a, b)
    assert np.array_equal(got[0][0], olh.aggregate(rep, device="numpy"))
    assert np.array_equal(got[0][1], oue.aggregate(rep_u, device="numpy"))


def test_channel_oracle_counts_equal_numpy():
    ch = Channel.grr(1.0, 6)
    gen = np.random.default_rng(2)
    rep = ch.perturb(gen.integers(0, 6, 4000), gen)
    assert np.array_equal(ch.aggregate(rep, device="cpu"), ch.aggregate(rep, device="numpy"))


def test_device_argument_errors_name_it():
    grr = oracles.get("grr", 1.0, 3)
    with pytest.raises(ValueError, match="device must be one of"):
        grr.aggregate([0, 1], device="gpu")
    assert kernels.resolve("numpy", 10**12) == "numpy"
    assert kernels.resolve(None, 0) == "numpy"
    assert kernels.resolve("auto", kernels.AUTO_CELLS) == "cpu"


def test_fused_range_check_raises_the_numpy_error():
    for name, size in (("grr", 5), ("hr", 8)):
        orc = oracles.get(name, 1.0, 5)
        for bad in (np.array([0, 1, size], np.int64), np.array([-1, 0], np.int64), np.array([0, 1.5])):
            with pytest.raises(ValueError) as want:
                orc.aggregate(bad, device="numpy")
            with pytest.raises(ValueError, match="reports must be") as got:
                orc.aggregate(bad, device="cpu")
            assert str(got.value) == str(want.value)
    counts, bad = cpu.histogram_checked(np.array([0, 4, 5, -3, 4], np.int64), 5)
    assert bad == 2 and counts.tolist() == [1, 0, 0, 0, 2]


def test_ss_fused_checks_raise_the_numpy_errors():
    ss = oracles.get("ss", 1.0, 10, k=3)
    for bad in (np.array([[0, 1, 2], [3, 3, 4]], np.int64), np.array([[0, 1, 10]], np.int64),
                np.array([[0, -1, 2]], np.int64)):
        with pytest.raises(ValueError) as want:
            ss.aggregate(bad, device="numpy")
        with pytest.raises(ValueError, match="reports must") as got:
            ss.aggregate(bad, device="cpu")
        assert str(got.value) == str(want.value)
    counts, bad = cpu.subset_counts_checked(np.array([[0, 1, 1], [2, 0, 12]], np.int64), 10)
    assert bad == 2 and counts[:3].tolist() == [2, 1, 1] and counts.sum() == 4


def test_precompile_compiles_every_kernel_an_oracles_count_runs(tmp_path):
    """After ``kernels.precompile()`` (``make``'s install step), every oracle's count on
    ``device="cpu"`` — the CASES above, with the thread count at 1 and at the machine's — runs on
    kernels it compiled, and so do the sketch oracles' counts (CMS, HCMS), the poisoning attacks'
    report kernels through ``kernels.hash_row_counts`` / ``best_bucket_keys``, and the sketch, report
    and ridge kernels called through their modules' public functions on inputs of other dtypes and
    sizes: no kernel gains a type signature. A fresh
    interpreter, so the signatures start empty (compiled or loaded from the on-disk cache, as that
    process finds it)."""
    import json
    import subprocess
    import sys

    code = f"""
import json, numba, numpy as np
from ldpopt import kernels, oracles
from ldpopt.kernels import cpu, cpu_reports, ridge, sketch
names = kernels.precompile()
def sigs():
    return {{f"{{m.__name__}}.{{n}}": sorted(map(str, getattr(m, n).signatures)) for m in (cpu, cpu_reports, ridge, sketch)
             for n in dir(m) if hasattr(getattr(m, n), "signatures")}}
before = sigs()
for t in sorted({{1, numba.config.NUMBA_NUM_THREADS}}):
    numba.set_num_threads(t)
    for name, eps, d, n in {CASES!r}:
        gen = np.random.default_rng(0)
        orc = oracles.get(name, eps, d)
        orc.aggregate(orc.perturb(gen.integers(0, d, n), gen), device="cpu")
    for name in ("cms", "hcms"):  # the sketch kernels through the sketch oracles' own counts
        gen = np.random.default_rng(0)
        orc = oracles.get(name, 1.0, 50)
        orc.aggregate(orc.perturb(gen.integers(0, 50, 300), gen), device="cpu")
gen = np.random.default_rng(1)
keys = gen.integers(-2**63, 2**63 - 1, size=(50, 3), dtype=np.int64)
kernels.hash_row_counts(keys[:, 1], gen.integers(0, 4, 50), np.arange(9), 4, "cpu")  # the attacks' entry points
kernels.best_bucket_keys(keys[:4], np.arange(3), 5, "cpu")
cpu_reports.hash_row_counts(keys[:, 0].astype(np.uint64), gen.integers(0, 6, 50).astype(np.int32), np.arange(7, dtype=np.int32), 6)
cpu_reports.best_bucket_keys(keys, np.arange(5, dtype=np.int32), 8)
sketch.grouped_bit_sums(gen.integers(0, 4, 30).astype(np.int32), gen.integers(0, 2, (30, 5)).astype(np.uint8), 4)
sketch.signed_cell_sums(np.c_[gen.integers(0, 3, 20), gen.integers(0, 4, 20), gen.choice([-1, 1], 20)].astype(np.int32), 3, 4)
sketch.fwht_rows(gen.integers(-5, 5, (3, 8)).astype(np.int32))
import scipy.sparse as sp
X = sp.random(40, 6, density=0.3, format="csc", random_state=2)
X.data[:] = 1.0
y = gen.random(40)
ridge.coordinate_descent(X.indptr, X.indices, X.data.astype(np.float32), y.astype(np.float32), 0.5, w0=np.ones(6),
                         sklearn_rule=True, cycles=False)
ridge.lasso_support(X.indptr.astype(np.int32), X.indices, y, 0.01)
print(json.dumps({{"names": names, "before": before, "after": sigs()}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert {"cpu.histogram", "cpu.column_counts", "cpu.hash_counts_wide", "cpu_reports.row_counts", "cpu_reports.search",
            "sketch.grouped_bit_sums", "sketch.signed_cell_sums", "sketch.fwht_rows", "ridge.cd",
            "ridge.lasso"} <= set(got["names"]), got["names"]
    assert got["after"] == got["before"], got
