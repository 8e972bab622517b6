"""`ldpopt postprocess`: method parameters reach the methods that take them and nothing is ignored
silently; counts are checked against n with the line named; integers parse one way everywhere; outputs
carry their metadata, the mode a plain write gives, and the format their name says. The tests of file
modes (a umask set in the child) and of a count above n (the one-line error as the terminal shows it)
run the real entry point (a subprocess, ``subprocess_run``); the others call ``ldpopt.cli.main`` in this
process (``run``, ``main_in_process``: the same output, files and exit status, without a fresh
interpreter's imports)."""

from __future__ import annotations

import json
import stat

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import ldpopt
from _cli import ldpopt as subprocess_run
from _cli import main_in_process as run
from _cli import one_line_error
from ldpopt import methods, oracles

# OUE, ε = 1, d = 8, n = 1000: spread enough that the thresholds of Base-Cut and Norm-Hyb move with α
COUNTS = [340, 300, 285, 275, 265, 250, 240, 230]
N = 1000


def _csv(path, values, counts):
    path.write_text("value,count\n" + "".join(f"{v},{c}\n" for v, c in zip(values, counts)))
    return path


@pytest.fixture
def counts_csv(tmp_path):
    return _csv(tmp_path / "c.csv", [f"v{i}" for i in range(len(COUNTS))], COUNTS)


def _est(oracle="oue", counts=COUNTS, n=N, **kw):
    return oracles.get(oracle, 1.0, len(counts), **kw).estimate(np.array(counts, float), n)


def _json(proc):
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# -- --param -----------------------------------------------------------------------------------------

def test_param_with_method_all_reaches_every_method_that_takes_it(counts_csv):
    doc = _json(run("postprocess", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1", "--n", N,
                    "--method", "all", "--param", "alpha=0.5", "--json"))
    est = _est()
    for name in ("base-cut", "norm-hyb"):
        want = methods.get(name).func(est, alpha=0.5)
        assert not np.allclose(want, methods.get(name).func(est))  # α matters on these counts
        np.testing.assert_array_equal(doc["data"][name], want)
        assert doc["metadata"]["method_params"][name]["alpha"] == 0.5
    np.testing.assert_array_equal(doc["data"]["norm-sub"], methods.get("norm-sub").func(est))


@pytest.mark.parametrize("method", ["norm-sub", "all"])
def test_param_no_selected_method_takes_is_an_error_naming_who_takes_what(counts_csv, tmp_path, method):
    out = tmp_path / "o.csv"
    err = one_line_error(run("postprocess", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1",
                             "--n", N, "--method", method, "--param", "bogus=1", "--out", out))
    assert "bogus" in err and "base-cut: alpha (float)" in err and "mle-apx: method (str)" in err, err
    assert not out.exists()


def test_param_named_method_reaches_mle_apx(counts_csv):
    """issue 12 item 5: `method` is MLE-Apx's own parameter, not postprocess's."""
    est = _est()
    doc = _json(run("postprocess", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1", "--n", N,
                    "--method", "mle-apx", "--param", "method=brentq", "--param", "polish=false", "--json"))
    np.testing.assert_array_equal(doc["data"]["mle-apx"], methods.get("mle-apx").func(est, method="brentq", polish=False))
    np.testing.assert_allclose(doc["data"]["mle-apx"], methods.get("mle-apx").func(est), atol=1e-9)
    assert doc["metadata"]["method_params"]["mle-apx"] == {"method": "brentq", "polish": False}
    # with --method all a METHOD. prefix gives each clashing name to one method
    doc = _json(run("postprocess", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1", "--n", N,
                    "--method", "all", "--param", "mle-apx.method=brentq", "--param", "em.method=iterative",
                    "--json"))
    assert doc["metadata"]["method_params"]["mle-apx"]["method"] == "brentq"
    assert doc["metadata"]["method_params"]["em"]["method"] == "iterative"
    np.testing.assert_array_equal(doc["data"]["em"], methods.get("em").func(est, method="iterative"))


def _cli_text(v) -> str:
    """A parameter's value as --param writes it."""
    if v is None or isinstance(v, bool):
        return str(v).lower()
    return ",".join(f"{x:g}" for x in v) if isinstance(v, tuple) else str(v)


def test_every_documented_method_parameter_is_reachable(counts_csv):
    """Every keyword of every method's signature, given through --param (METHOD.NAME with --method all,
    one run) with the value its record carries, gives what the same keyword gives in Python."""
    from ldpopt.cli._params import method_params

    # each method's record carries a value per keyword (MethodInfo.param_examples)
    kw = {name: dict(methods.get(name).param_examples) for name in methods.available().index
          if methods.get(name).param_examples}
    for name in methods.available().index:  # every parameter of every method is reached
        assert set(methods.get(name).param_examples) == set(method_params(name)), name
    items = [f"--param={m}.{k}={_cli_text(v)}" for m, ps in kw.items() for k, v in ps.items()]
    doc = _json(run("postprocess", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1", "--n", N,
                    "--method", "all", "--ordered", *items, "--json"))
    est = _est()
    for name, ps in kw.items():
        e = est.as_ordered() if methods.get(name).needs_order else est  # --ordered: the Wiener methods run
        np.testing.assert_array_equal(doc["data"][name], methods.get(name).func(e, **ps), err_msg=name)
        meta = doc["metadata"]["method_params"][name]
        assert meta == {k: (list(v) if isinstance(v, tuple) else v) for k, v in ps.items()}, name


@pytest.mark.parametrize("item,needle", [("k=2.5", "k must be int|none"), ("alpha=abc", "alpha must be float"),
                                         ("alpha=nan", "alpha must be float")])
def test_param_of_the_wrong_type_is_named(counts_csv, item, needle):
    err = one_line_error(run("postprocess", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1",
                             "--n", N, "--method", "norm-hyb", "--param", item))
    assert needle in err, err


def test_a_method_that_fails_is_one_line_naming_it_and_its_parameters(counts_csv):
    err = one_line_error(run("postprocess", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1",
                             "--n", N, "--method", "em", "--param", "method=iterative", "--param", "max_iter=1"))
    assert "--method em: EM did not converge" in err and "max_iter=1" in err, err


def test_help_documents_the_parameters_and_their_types():
    proc = run("postprocess", "--help")
    assert proc.returncode == 0
    assert "mle-apx" in proc.stdout and "method (str), polish (bool)" in proc.stdout
    assert "norm-hyb" in proc.stdout and "k (int|none)" in proc.stdout


# -- counts against n, integers ----------------------------------------------------------------------

def test_count_above_n_names_the_line_with_plain_numbers(tmp_path):
    src = _csv(tmp_path / "c.csv", ["a", "b", "c"], [10, 5000, 7])
    err = one_line_error(subprocess_run("postprocess", "--counts", src, "--oracle", "oue", "--epsilon", "1",
                                        "--n", 4000))
    assert "line 3 of" in err and "count 5000 " in err and "--n 4000" in err, err
    assert "np." not in err and "5000.0" not in err


def test_grr_counts_must_sum_to_n_exactly(tmp_path):
    """5 reports unaccounted for in a million: no relative tolerance may hide it."""
    src = _csv(tmp_path / "c.csv", ["a", "b", "c"], [500_000, 300_000, 199_995])
    for n in (1_000_000, 999_990):
        err = one_line_error(run("postprocess", "--counts", src, "--oracle", "grr", "--epsilon", "1", "--n", n))
        assert "sum to 999995" in err and f"--n {n}" in err, err
    doc = _json(run("postprocess", "--counts", src, "--oracle", "grr", "--epsilon", "1", "--n", 999_995,
                    "--method", "norm-sub", "--json"))
    assert doc["n"] == 999_995


def test_ss_counts_must_sum_to_k_times_n(tmp_path):
    ss = oracles.get("ss", 1.0, 8)
    counts = ss.simulate(np.array([30, 20, 10, 10, 5, 5, 10, 10]), 0, exact=True).counts  # real reports
    src = _csv(tmp_path / "c.csv", range(8), counts.astype(int))
    doc = _json(run("postprocess", "--counts", src, "--oracle", "ss", "--epsilon", "1", "--n", 100, "--json"))
    assert doc["metadata"]["oracle_params"] == {"k": ss.k}
    err = one_line_error(run("postprocess", "--counts", src, "--oracle", "ss", "--epsilon", "1", "--n", 101))
    assert f"k·n = {ss.k} × 101" in err, err


def test_integer_arguments_parse_one_way_everywhere(counts_csv, tmp_path):
    doc = _json(run("postprocess", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1", "--n", "1e3",
                    "--method", "norm-sub", "--json"))
    assert doc["n"] == 1000 and isinstance(doc["n"], int)
    for argv in (["postprocess", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1", "--n", "1000.5"],
                 ["postprocess", "--counts", counts_csv, "--oracle", "grr", "--epsilon", "1", "--d", "9.5"],
                 ["verify", "--quick", "--oracles", "grr", "--epsilons", "1", "--d", "10", "--n", "1.5e0"],
                 ["experiment", "run", "x", "--jobs", "2.5"]):
        proc = run(*argv)
        assert proc.returncode == 2 and "must be an integer" in proc.stderr, (argv, proc.stderr)


# -- --d ---------------------------------------------------------------------------------------------

def test_d_gives_absent_values_count_zero(tmp_path):
    src = _csv(tmp_path / "c.csv", [7, 0, 3], [120, 300, 80])
    doc = _json(run("postprocess", "--counts", src, "--oracle", "oue", "--epsilon", "1", "--n", 500,
                    "--d", 10, "--method", "norm-sub", "--json"))
    full = np.zeros(10)
    full[[7, 0, 3]] = [120, 300, 80]
    assert doc["data"]["value"] == list(range(10)) and doc["data"]["count"] == full.tolist()
    est = _est(counts=full, n=500)
    np.testing.assert_array_equal(doc["data"]["base"], est.f_tilde)
    np.testing.assert_array_equal(doc["data"]["norm-sub"], methods.get("norm-sub").func(est))
    assert doc["d"] == 10 and doc["metadata"]["d"] == 10


@pytest.mark.parametrize("bad", ["10", "2.5"])
def test_d_value_outside_the_domain_names_the_line(tmp_path, bad):
    src = _csv(tmp_path / "c.csv", [1, bad, 3], [10, 20, 30])
    err = one_line_error(run("postprocess", "--counts", src, "--oracle", "oue", "--epsilon", "1", "--n", 100,
                             "--d", 10))
    assert "line 3 of" in err and "[0, 10)" in err and repr(bad) in err, err


# -- outputs -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("umask,suffix", [(0o027, "csv"), (0o077, "parquet"), (0o002, "json")])
def test_output_files_get_the_mode_a_plain_write_gives(counts_csv, tmp_path, umask, suffix):
    want = 0o666 & ~umask
    out = tmp_path / f"o.{suffix}"
    proc = subprocess_run("postprocess", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1", "--n", N,
                          "--method", "norm-sub", "--out", out, umask=umask)
    assert proc.returncode == 0, proc.stderr
    written = [out] + ([tmp_path / "o.csv.meta.json"] if suffix == "csv" else [])
    assert [stat.S_IMODE(p.stat().st_mode) for p in written] == [want] * len(written)


def test_overwriting_keeps_the_existing_files_mode(counts_csv, tmp_path):
    out = tmp_path / "o.csv"
    out.write_text("old\n")
    out.chmod(0o640)
    proc = subprocess_run("postprocess", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1", "--n", N,
                          "--method", "norm-sub", "--out", out, umask=0o022)
    assert proc.returncode == 0 and stat.S_IMODE(out.stat().st_mode) == 0o640
    assert out.read_text().startswith("value,count,base,norm-sub")


@pytest.mark.parametrize("fmt,suffix", [("parquet", "csv"), ("csv", "pq")])
def test_format_contradicting_the_suffix_is_refused(counts_csv, tmp_path, fmt, suffix):
    out = tmp_path / f"x.{suffix}"
    err = one_line_error(run("postprocess", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1",
                             "--n", N, "--format", fmt, "--out", out))
    assert f"--format {fmt}" in err and str(out) in err
    assert not out.exists()


@pytest.mark.parametrize("where", ["file", "folder"])
def test_bad_out_path_is_one_line_and_leaves_nothing(counts_csv, tmp_path, where):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    out = blocker / "o.csv" if where == "file" else tmp_path
    err = one_line_error(run("postprocess", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1",
                             "--n", N, "--out", out, "--format", "csv"))
    assert "--out" in err and str(out) in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "c.csv"]


def test_results_carry_their_metadata_in_every_format(counts_csv, tmp_path):
    o = oracles.get("olh", 1.0, len(COUNTS), g=4)
    want = {"oracle": "olh", "epsilon": 1.0, "n": N, "d": len(COUNTS), "p": o.p, "q": o.q,
            "ldpopt_version": ldpopt.__version__, "oracle_params": {"g": 4}}
    metas = {}
    for suffix in ("csv", "parquet", "json"):
        out = tmp_path / f"r.{suffix}"
        proc = run("postprocess", "--counts", counts_csv, "--oracle", "olh", "--g", 4, "--epsilon", "1",
                   "--n", N, "--method", "base-cut", "--param", "alpha=0.5", "--out", out)
        assert proc.returncode == 0, proc.stderr
        if suffix == "csv":
            metas[suffix] = json.loads((tmp_path / "r.csv.meta.json").read_text())
            assert list(pd.read_csv(out).columns) == ["value", "count", "base", "base-cut"]  # plain CSV
        elif suffix == "parquet":
            metas[suffix] = json.loads(pq.read_schema(out).metadata[b"ldpopt"])
        else:
            metas[suffix] = json.loads(out.read_text())["metadata"]
        assert out.read_bytes().startswith({"csv": b"value,", "parquet": b"PAR1", "json": b"{"}[suffix])
    for suffix, meta in metas.items():
        assert {k: meta[k] for k in want} == want, suffix
        assert meta["methods"] == ["base-cut"] and meta["method_params"] == {"base-cut": {"alpha": 0.5}}
