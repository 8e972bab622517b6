"""Values, sizes and types checked before any work, on generated inputs: integral but too large
numbers, ε whose q underflows, JSON keys given twice, fixed frequencies outside [0, 1], CSV columns
given twice, config seeds, experiment and perturb sizes against memory and disk, heavy-hitters -k
against PEM's rule, the default aggregation scheduler, SIGTERM, and a solver's C prints kept off
standard output."""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from _cli import ldpopt
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpopt.cli._args import InputError, integer

LIMIT = 2**63


# -- integers: "1e30" is an integer, too large; "1.5" is no integer -------------------------------------
@settings(max_examples=examples(150))
@given(st.one_of(st.integers(LIMIT, 10**40), st.integers(-(10**40), -LIMIT)), st.booleans())
def test_an_integral_number_past_2_63_is_called_too_large(m, scientific):
    text = f"{Decimal(m):.6e}" if scientific else str(m)
    if Decimal(text) != Decimal(text).to_integral_value():  # pragma: no cover - 6 digits of m ≥ 2^63: whole
        return
    with pytest.raises(InputError, match=r"--n .* is an integer but too large: at most 9223372036854775807"):
        integer(text, "--n")


@settings(max_examples=examples(150))
@given(st.integers(-(LIMIT - 1), LIMIT - 1), st.integers(0, 3))
def test_an_integral_number_below_2_63_is_read_exactly(m, zeros):
    assert integer(f"{m}{'0' * zeros}e-{zeros}" if zeros else str(m), "--n") == m


@settings(max_examples=examples(100))
@given(st.decimals(allow_nan=False, allow_infinity=False, places=3).filter(lambda x: x != x.to_integral_value()))
def test_a_non_integral_number_is_no_integer(x):
    with pytest.raises(InputError, match="must be an integer"):
        integer(str(x), "--n")


# -- ε so large that q rounds to 0 (or p to 1): refused as verify refuses it -----------------------------
@settings(max_examples=examples(60))
@given(st.sampled_from(["grr", "oue", "olh", "sue", "hr"]), st.floats(0.05, 2000), st.integers(2, 5000))
def test_an_epsilon_is_refused_exactly_where_q_or_p_leaves_the_open_interval(name, eps, d):
    from ldpopt import oracles
    from ldpopt.cli.postprocess import check_budget

    o = oracles.get(name, eps, d)
    degenerate = not (float(o.q) > 0.0 and float(o.p) < 1.0)
    if degenerate:
        with pytest.raises(InputError, match=r"^--epsilon .*too large for oracle"):
            check_budget(o, eps, d)
    else:
        check_budget(o, eps, d)


def test_postprocess_epsilon_800_is_one_line_naming_epsilon(tmp_path):
    (tmp_path / "c.csv").write_text("value,count\na,300\nb,200\nc,100\n")
    line = _error_of(["postprocess", "--counts", str(tmp_path / "c.csv"), "--oracle", "oue", "--epsilon", "800",
                      "--n", "1000"])
    assert line.startswith("ldpopt postprocess: error: --epsilon 800: too large for oracle oue"), line


# -- problem files: a JSON key given twice, a fixed frequency outside [0, 1] ------------------------------
_json = st.recursive(st.one_of(st.integers(-5, 5), st.booleans(), st.text("abc", max_size=3)),
                     lambda inner: st.one_of(st.lists(inner, max_size=3),
                                             st.dictionaries(st.text("xyz", min_size=1, max_size=2), inner, max_size=3)),
                     max_leaves=8)


@settings(max_examples=examples(80))
@given(tree=_json, depth=st.integers(0, 4), key=st.text("kq", min_size=1, max_size=2))
def test_a_json_key_given_twice_at_any_depth_is_refused(tree, depth, key, tmp_path_factory):
    from ldpopt.cli._problemfile import _parse

    inner = '{"%s": 1, "%s": 2}' % (key, key)  # noqa: UP031 - the JSON text itself
    text = inner
    for i in range(depth):
        text = '{"a%d": %s, "b": %s}' % (i, json.dumps(tree), text) if i % 2 == 0 else f"[{text}]"  # noqa: UP031
    doc = '{"objective": "cls", "params": %s}' % text  # noqa: UP031
    path = tmp_path_factory.mktemp("p") / "p.json"
    path.write_text(doc)
    with pytest.raises(InputError, match=f"the key '{key}' is given twice"):
        _parse(path)
    path.write_text('{"objective": "cls", "params": %s}' % json.dumps(tree))  # noqa: UP031 - unique keys: read
    assert _parse(path)[0]["params"] == tree


@settings(max_examples=examples(15))
@given(freq=st.one_of(st.floats(-10, 10, allow_nan=False), st.floats(0, 1)), as_list=st.booleans())
def test_a_fixed_frequency_is_accepted_exactly_in_0_1(freq, as_list, tmp_path_factory):
    folder = tmp_path_factory.mktemp("f")
    value = f"[{freq!r}]" if as_list else repr(freq)
    (folder / "f.toml").write_text(f'objective = "cls"\n[[constraints]]\ntype = "nonnegative"\n[[constraints]]\n'
                                   f'type = "fixed"\npositions = [1]\nfrequency = {value}\n')
    (folder / "c.csv").write_text("value,count\na,300\nb,200\nc,100\n")
    argv = ["solve", "--counts", folder / "c.csv", "--oracle", "oue", "--epsilon", "1", "--n", "1000", "--problem",
            folder / "f.toml", "--allow-no-simplex"]
    if 0 <= freq <= 1:
        code, _, err = _main(argv)
        assert code in (0, 1) and "frequency" not in err, err  # solved (or its status said), not refused
    else:
        assert "frequency must be in [0, 1]" in _error_of(argv)


# -- multi: a CSV column named twice ---------------------------------------------------------------------
@settings(max_examples=examples(60))
@given(st.lists(st.text("ABC", min_size=1, max_size=2), min_size=2, max_size=6))
def test_a_csv_header_naming_a_column_twice_is_refused(names):
    from ldpopt.cli.multi import _unique_header

    data = (",".join(names) + "\n" + ",".join("x" for _ in names) + "\n").encode()
    if len(set(names)) < len(names):
        with pytest.raises(InputError, match="^--tuples: t.csv names the column"):
            _unique_header(data, "t.csv", "--tuples")
    else:
        _unique_header(data, "t.csv", "--tuples")


# -- experiment configs: integral seeds, sizes against memory and disk -----------------------------------
def _config(tmp_path: Path, extra: str) -> Path:
    p = tmp_path / "tiny.toml"
    p.write_text('name = "tiny"\nkind = "full-domain"\ndatasets = [{name = "zipf", n = 2000, d = 8, rng = 1}]\n'
                 'oracles = ["oue"]\nepsilons = [1.0, 2.0]\nmethods = ["base", "norm-sub"]\n' + extra)
    return p


@settings(max_examples=examples(40))
@given(seed=st.one_of(st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: not float(x).is_integer()),
                      st.integers(-(10**20), -1), st.integers(LIMIT, 10**20), st.booleans(), st.text("ab", max_size=2)))
def test_a_config_seed_must_be_an_integer_in_0_2_63(seed, tmp_path_factory):
    from ldpopt.experiments.config import load_config

    p = _config(tmp_path_factory.mktemp("c"), f"seed = {json.dumps(seed)}\n")
    with pytest.raises(ValueError, match="seed must be an integer"):
        load_config(p)


@settings(max_examples=examples(40))
@given(reps=st.integers(1, 10**15), memory=st.integers(10**3, 10**13), disk=st.integers(10**3, 10**13))
def test_an_experiment_is_refused_exactly_when_its_tasks_exceed_memory_or_disk(reps, memory, disk, tmp_path_factory):
    from ldpopt.cli import _limits
    from ldpopt.cli.experiment import PART_BYTES, TASK_BYTES, _check_size
    from ldpopt.experiments.config import load_config

    cfg = load_config(_config(tmp_path_factory.mktemp("c"), f"repetitions = {reps}\n"))
    tasks = 2 * reps  # 1 dataset × 1 oracle × 2 ε
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_limits, "available_memory", lambda: memory)
        mp.setattr(_limits, "available_disk", lambda path: disk)
        if tasks * TASK_BYTES > memory or tasks * PART_BYTES > disk:
            with pytest.raises(InputError, match=rf"^repetitions = {reps} in .*{re.escape(f'{tasks:.4g}')} tasks"):
                _check_size(cfg, "res")
        else:
            _check_size(cfg, "res")


def test_repetitions_1e11_is_one_line_before_any_work(tmp_path):
    _config(tmp_path, "repetitions = 100000000000\n")
    line = _error_of(["experiment", "run", "tiny.toml", "--out", "res", "--no-progress"], cwd=tmp_path)
    assert "repetitions = 100000000000" in line and "ask for less" in line, line
    assert not (tmp_path / "res").exists()


@pytest.mark.parametrize("address", ["bogus", "tcp://", "http://x:1", "tcp://host", "tcp://h:notaport"])
def test_a_scheduler_that_is_no_address_is_refused_before_work(tmp_path, address):
    _config(tmp_path, "repetitions = 2\n")
    line = _error_of(["experiment", "run", "tiny.toml", "--out", "res", "--scheduler", address], cwd=tmp_path)
    assert line.startswith(f"ldpopt experiment: error: --scheduler {address!r}: not a Dask scheduler address"), line
    assert not (tmp_path / "res").exists()


# -- perturb: the shards against the free disk -----------------------------------------------------------
@pytest.mark.parametrize("oracle", ["grr", "oue", "olh"])
def test_perturb_refuses_what_the_disk_cannot_hold_naming_the_numbers(tmp_path, oracle, monkeypatch):
    from ldpopt.cli import _limits

    (tmp_path / "h.csv").write_text("value,count\na,600000\nb,600000\n")  # past SIZE_CHECK_USERS
    monkeypatch.setattr(_limits, "available_disk", lambda path: 10_000)
    line = _error_of(["perturb", "--histogram", str(tmp_path / "h.csv"), "--oracle", oracle, "--epsilon", "1",
                      "--seed", "0", "--out", str(tmp_path / "o")])
    assert line.startswith(f"ldpopt perturb: error: --histogram: 1.2e+06 users of {oracle}"), line
    assert "9.77 KiB is free" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.csv"]  # nothing started, nothing left


def test_perturb_estimate_is_within_a_factor_of_what_it_writes(tmp_path):
    """The sample shard's bytes per user against a real run's (2^21 users of OLH, 2 shards)."""
    from ldpopt.cli import _limits

    (tmp_path / "h.csv").write_text("value,count\n" + "".join(f"v{i},{2**21 // 8}\n" for i in range(8)))
    seen = {}

    def disk(path):
        seen["asked"] = True
        return 10**15
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_limits, "available_disk", disk)
        code, _, err = _main(["perturb", "--histogram", str(tmp_path / "h.csv"), "--oracle", "olh", "--epsilon", "1",
                              "--seed", "0", "--out", str(tmp_path / "o"), "--shard-rows", str(2**20)])
    assert code == 0 and seen, err
    written = sum(p.stat().st_size for p in (tmp_path / "o").iterdir())
    from ldpopt import oracles
    from ldpopt.aggregate.shards import write_shard_batches
    from ldpopt.cli.perturb import SAMPLE_USERS

    o = oracles.get("olh", 1.0, 8)
    sample = write_shard_batches(tmp_path / "s.parquet", o, [o.perturb(np.arange(SAMPLE_USERS) % 8, 0)])
    estimate = sample.stat().st_size / SAMPLE_USERS * 2**21
    assert 0.5 < estimate / written < 2.0, (estimate, written)


# -- heavy-hitters -k: PEM's own rule, checked before the work -------------------------------------------
@settings(max_examples=examples(100))
@given(st.integers(1, 2**40), st.integers(1, 7), st.integers(1, 16))
def test_k_is_refused_exactly_where_pem_would_refuse_it(k, nbytes, step):
    from types import SimpleNamespace

    from ldpopt.cli.heavy_hitters import _check_k
    from ldpopt.heavy.pem import pem_lengths

    args = SimpleNamespace(k=k, bytes=nbytes, step=step, protocol="pem")
    if step > 8 * nbytes:
        return  # --step's own check
    try:
        pem_lengths(8 * nbytes, k, step)
        pem_ok = k <= 2 ** (8 * nbytes)
    except ValueError:
        pem_ok = False
    if pem_ok:
        _check_k(args)
    else:
        with pytest.raises(InputError, match=rf"^-k {k}: "):
            _check_k(args)


# -- aggregate: the default scheduler -------------------------------------------------------------------
@settings(max_examples=examples(60))
@given(sizes=st.lists(st.integers(0, 2**36), min_size=1, max_size=5), cores=st.integers(1, 256))
def test_auto_picks_a_cluster_only_past_the_threshold_with_cores(sizes, cores):
    import os

    from ldpopt.aggregate import cluster
    from ldpopt.cli.aggregate import AUTO_CLUSTER_BYTES, AUTO_CLUSTER_CORES, pick_scheduler

    files = [f"f{i}" for i in range(len(sizes))]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os.path, "getsize", lambda f: sizes[files.index(f)])
        mp.setattr(cluster, "usable_cores", lambda: cores)
        picked, why = pick_scheduler(files)
    want = "local" if sum(sizes) > AUTO_CLUSTER_BYTES and cores > AUTO_CLUSTER_CORES else "threads"
    assert picked == want and why.startswith("auto: ") and "\n" not in why


def test_aggregate_by_default_counts_in_process_and_says_so(tmp_path):
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    import _cli_cases as C

    C._shards(tmp_path)
    code, out, err = _main(["aggregate", str(tmp_path / "shards"), "--no-progress"])
    assert code == 0, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ldpopt aggregate: scheduler: threads (auto: "), err
    assert out.startswith("value,count\n")


# -- a killed command and a solver's prints ---------------------------------------------------------------
def test_c_level_prints_of_a_method_land_on_stderr_and_stdout_holds_only_the_csv(tmp_path):
    """A method whose C code prints (as OSQP's does) and that writes to fd 1 directly: through the
    real entry point, stdout is the CSV alone, parsed whole; the chatter is on stderr."""
    import pandas as pd

    (tmp_path / "c.csv").write_text("value,count\na,300\nb,200\nc,100\nd,50\n")
    (tmp_path / "chat.py").write_text(
        "import ctypes, os\nfrom ldpopt import methods\n\n\ndef chatty(est):\n"
        "    ctypes.CDLL(None).printf(b'solver chatter from C\\n')\n"
        "    os.write(1, b'chatter on fd 1\\n')\n"
        "    return methods.get('norm-sub').func(est)\n")
    proc = ldpopt("postprocess", "--counts", "c.csv", "--oracle", "oue", "--epsilon", "1", "--n", "1000",
                  "--method", "chat.py:chatty", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "chatter" not in proc.stdout and "solver chatter from C" in proc.stderr and "chatter on fd 1" in proc.stderr
    table = pd.read_csv(io.StringIO(proc.stdout))
    assert list(table.columns) == ["value", "count", "base", "chatty"] and len(table) == 4
    assert math.isclose(table["chatty"].sum(), 1.0, rel_tol=1e-12)


def test_python_dash_m_ldpopt_is_the_command():
    import subprocess
    import sys

    from _cli import ROOT
    from ldpopt.cli._version import version_line

    proc = subprocess.run([sys.executable, "-m", "ldpopt", "--version"], capture_output=True, text=True, check=False,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0 and proc.stdout == f"{version_line(ROOT)}\n", proc.stderr  # the commit of a checkout


# -- helpers ----------------------------------------------------------------------------------------------
def _main(argv, cwd=None):
    import os

    from ldpopt import cli

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main([str(a) for a in argv])
            except SystemExit as exc:
                code = exc.code
    finally:
        os.chdir(old)
    return code, out.getvalue(), err.getvalue()


def _error_of(argv, cwd=None) -> str:
    code, _, err = _main(argv, cwd)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, (code, err)
    return lines[0]
