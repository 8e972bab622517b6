"""The readers against the real peer libraries (the ``peers`` extra: pure-ldp, multi-freq-ldpy,
opendp, pinned in pyproject.toml). Each case drives the peer's own client and server on the same
reports (ldpopt.interop.conformance): counts equal, the peer's own estimate equal to ldpopt's,
ldpopt's estimate unbiased over repetitions, and post-processing on top. Skipped, with the reason,
where a peer package is not installed."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

# pure-ldp's clients call random.randint with float bounds (deprecated since Python 3.10): the peer's
# code, not ours; 6,000 copies of that warning would bury the ones that matter.
pytestmark = pytest.mark.filterwarnings("ignore:non-integer arguments to randrange:DeprecationWarning")

from ldpopt import methods
from ldpopt.interop.conformance import CASES, run_case

_MODULE = {"pure-ldp": "pure_ldp", "multi-freq-ldpy": "multi_freq_ldpy", "opendp": "opendp"}


@pytest.mark.parametrize("case", list(CASES), ids=lambda c: f"{c[0]}:{c[1]}")
def test_reader_matches_peer_and_is_unbiased(case):
    pytest.importorskip(_MODULE[case[0]], reason=f"{case[0]} not installed (pip install -e '.[peers]')")
    if case == ("multi-freq-ldpy", "LH (OLH)"):
        pytest.importorskip("xxhash")
    row = run_case(case, reps=40, seed=1)
    assert row["counts_equal"], row
    if row["max_abs_diff"] is not None:
        # pure-ldp estimates counts n·f̃ (n = 150): 1e-9 relative to n; MI frequencies: 1e-12
        assert row["max_abs_diff"] < (1e-9 * row["n"] if case[0] == "pure-ldp" else 1e-12), row
    if "FastLH" not in case[1]:  # a fixed pool of k hashes is biased given the pool (see pure_ldp.py)
        assert row["max_abs_z"] < 4.5, row


def test_postprocessing_on_peer_reports():
    pytest.importorskip("pure_ldp", reason="pure-ldp not installed (pip install -e '.[peers]')")
    from ldpopt.interop import pure_ldp as P
    from ldpopt.interop.conformance import seed_all
    from pure_ldp.frequency_oracles.unary_encoding import UEClient

    seed_all(3)
    client = UEClient(1.0, 8, use_oue=True)
    part = P.read_ue([client.privatise(int(v)) for v in np.repeat(np.arange(1, 9), 50)], 1.0, 8, use_oue=True)
    est = part.finalize()
    f = methods.get("norm-sub").func(est)
    assert np.all(f >= 0) and abs(f.sum() - 1) < 1e-9
    assert np.all(methods.get("power").func(est) >= 0)


def test_run_case_needs_a_repetition():
    with pytest.raises(ValueError, match="reps"):
        run_case(next(iter(CASES)), reps=0)
