"""``--central MECH:SCALE --n N``: a noisy total the noise cannot explain is refused.

The rule (``check_central_total``): exact counts of N users sum to N, so the noisy total differs from
N by a sum of d noise draws; ``--n`` is refused when a Chernoff bound on that sum's tail is below
1e-9. Checked on generated histograms with noise drawn by ``ldpopt.privacy.central`` (the true N is
accepted, an N far off is refused in one line naming ``--n``), and the bound itself against the
empirical tail of simulated sums (it must lie above it). Cost: ~1 s.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from _cli import main_in_process, one_line_error

from ldpopt import cli
from ldpopt.cli.postprocess import central_total_tail
from ldpopt.privacy import central

MECHS = ("laplace", "discrete-laplace", "gaussian", "discrete-gaussian")


@pytest.fixture(autouse=True)
def one_parser(monkeypatch):
    monkeypatch.setattr(cli, "build_parser", functools.cache(cli.build_parser))


@pytest.mark.parametrize("mech", MECHS)
def test_the_bound_lies_above_the_empirical_tail(mech):
    rng = np.random.default_rng(20_261_126)
    for scale, d in ((0.7, 1), (2.0, 5), (5.0, 40)):
        sums = central.get(mech).sample(20_000 * d, scale, rng=rng).reshape(20_000, d).sum(axis=1)
        for q in (0.9, 0.99, 0.999):
            t = float(np.quantile(np.abs(sums), q))
            assert central_total_tail(t, mech, scale, d) >= 1 - q - 3 * np.sqrt(q * (1 - q) / 20_000), (scale, d, q)
        assert central_total_tail(0.0, mech, scale, d) == 1.0


def test_a_total_that_contradicts_n_is_refused_and_the_true_n_accepted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(71)
    for case in range(12):
        mech = MECHS[case % 4]
        d, n, scale = int(rng.integers(2, 30)), int(rng.integers(10, 5000)), float(rng.uniform(0.5, 10))
        exact = rng.multinomial(n, rng.dirichlet(np.ones(d)))
        noisy = exact + central.get(mech).sample(d, scale, rng=rng)
        path = tmp_path / f"c{case}.csv"
        path.write_text("value,count\n" + "".join(f"v{i},{c:.17g}\n" for i, c in enumerate(noisy)), encoding="utf-8")
        args = ["postprocess", "--counts", path, "--central", f"{mech}:{scale!r}", "--method", "norm-sub"]
        ok = main_in_process(*args, "--n", n)
        assert ok.returncode == 0, ok.stderr
        far = n + int(np.ceil(60 * scale * np.sqrt(d))) + 10  # 60 noise standard deviations or more away
        for wrong in (far, max(1, n - far + n) if n > far - n else None):
            if wrong is None:
                continue
            line = one_line_error(main_in_process(*args, "--n", wrong))
            assert line.startswith(f"ldpopt postprocess: error: --n {wrong}: the noisy counts sum to "), line
    # the case a user met: 1,001 counted, --n 10
    (tmp_path / "big.csv").write_text("value,count\na,500\nb,501\n", encoding="utf-8")
    line = one_line_error(main_in_process("postprocess", "--counts", "big.csv", "--central", "laplace:2", "--n", "10"))
    assert "--n 10" in line and "1001" in line


def test_postprocess_and_choose_refuse_em_on_central_noise_with_the_same_advice(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "noisy.csv").write_text("value,count\na,503\nb,-2\nc,251\nd,249\n", encoding="utf-8")
    common = ["--counts", "noisy.csv", "--central", "laplace:2", "--n", "1000"]
    said = [one_line_error(main_in_process("postprocess", *common, "--method", "em")),
            one_line_error(main_in_process("choose", *common, "--methods", "em,norm-sub", "--repeats", "3"))]
    tails = {line.split("does not apply to this estimate: ", 1)[1] for line in said}
    assert len(tails) == 1 and "central-mle" in tails.pop(), said
    assert said[0].startswith("ldpopt postprocess: error: --method em: ")
    assert said[1].startswith("ldpopt choose: error: --methods em: ")
