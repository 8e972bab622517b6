"""`import ldpopt`, `ldpopt --version` and `ldpopt postprocess` with a closed form do not import cvxpy
(issue 10 item 8): cvxpy loads only when a problem is built. Each check runs in a fresh interpreter,
because this test process has long imported cvxpy."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _python(*args, cwd=None):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def _imported(stderr: str) -> set[str]:
    """Module names from ``python -X importtime`` output (one line per imported module)."""
    return {ln.rsplit("|", 1)[1].strip() for ln in stderr.splitlines() if ln.startswith("import time:") and "|" in ln}


def test_import_ldpopt_does_not_import_cvxpy():
    code = ("import sys, ldpopt\n"
            "assert 'cvxpy' not in sys.modules, 'import ldpopt loaded cvxpy'\n"
            "assert not any(m.startswith('ldpopt.problems') for m in sys.modules)\n"
            "est = ldpopt.oracles.get('oue', epsilon=1.0, d=8).estimate([50, 40, 30, 20, 10, 5, 2, 1], 100)\n"
            "f = ldpopt.postprocess(est, 'norm-sub')\n"
            "assert 'cvxpy' not in sys.modules, 'a closed form loaded cvxpy'\n"
            # nor scipy or pandas: the method modules import scipy where a method needs it
            "assert not {'scipy', 'pandas'} & {m.split('.')[0] for m in sys.modules}\n"
            "for name in ldpopt.__all__:\n    getattr(ldpopt, name)\n"
            # the lazy names still resolve, and building a problem is what loads cvxpy
            "from ldpopt import Problem\n"
            "assert 'cvxpy' in sys.modules and Problem is ldpopt.problems.Problem\n"
            "sol = Problem(est, objective='cls').solve()\n"
            "assert abs(sol.f - f).max() < 1e-6, abs(sol.f - f).max()\n"
            "assert {'Problem', 'verify', 'datasets'} <= set(dir(ldpopt))\n"
            "try:\n    ldpopt.no_such_name\nexcept AttributeError as e:\n    assert 'no_such_name' in str(e)\n"
            "else:\n    raise SystemExit('missing attribute did not raise')\n")
    out = _python("-c", code)
    assert out.returncode == 0, out.stderr


def test_cli_version_and_postprocess_do_not_import_cvxpy(tmp_path):
    counts = tmp_path / "counts.csv"
    counts.write_text("value,count\na,120\nb,80\nc,40\nd,10\ne,3\n")
    out = _python("-X", "importtime", "-m", "ldpopt.cli", "--version", cwd=tmp_path)
    assert out.returncode == 0 and "ldpopt" in out.stdout + out.stderr
    mods = _imported(out.stderr)
    assert "ldpopt" in mods and "cvxpy" not in mods
    out = _python("-X", "importtime", "-m", "ldpopt.cli", "postprocess", "--counts", str(counts), "--oracle", "grr",
                  "--epsilon", "1", "--method", "norm-sub", "--out", str(tmp_path / "post.csv"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    mods = _imported(out.stderr)
    assert "ldpopt.methods.registry" in mods and "cvxpy" not in mods and not any(m.startswith("ldpopt.problems") for m in mods)
    assert (tmp_path / "post.csv").read_text().splitlines()[0].endswith("norm-sub")


@pytest.mark.parametrize("name", ["Problem", "problems", "verify"])
def test_lazy_names_are_the_real_objects(name):
    import importlib

    import ldpopt

    obj = getattr(ldpopt, name)
    if name in ("problems", "verify"):
        assert obj is importlib.import_module(f"ldpopt.{name}")
    else:
        assert obj is getattr(importlib.import_module("ldpopt.problems"), name)


@pytest.mark.parametrize("name", ["Solution", "SolverError", "SolverWarning"])
def test_former_top_level_names_warn_and_are_the_real_objects(name):
    import importlib

    import ldpopt

    with pytest.warns(DeprecationWarning, match=rf"ldpopt\.{name} is deprecated .* use ldpopt\.problems\.{name}") as rec:
        obj = getattr(ldpopt, name)
    assert obj is getattr(importlib.import_module("ldpopt.problems"), name) and name not in ldpopt.__all__
    assert rec[0].filename == __file__


HEAVY = ("numpy", "scipy", "cvxpy", "pandas", "matplotlib", "dask", "pyarrow")


@pytest.mark.parametrize("argv", [
    ["-c", "import ldpopt"],
    ["-m", "ldpopt.cli", "--version"],
    ["-m", "ldpopt.cli", "--help"],
    ["-m", "ldpopt.cli"],
    ["-m", "ldpopt.cli", "no-such-command"],
    ["-m", "ldpopt.cli", "postprocess", "--epsilon", "x"],
    ["-m", "ldpopt.cli", "postprocess", "--counts", "c.csv", "--oracle", "oue", "--epsilon", "1", "--ci", "2"],
])
def test_start_up_loads_no_heavy_module(argv):
    """``import ldpopt``, ``--version``, ``--help``, a top-level usage error and an argument error of
    ``postprocess`` import none of the heavy packages (they cost ~2 s of a 2.3 s start:
    benchmarks/bench_startup.py)."""
    out = _python("-X", "importtime", *argv)
    assert out.returncode in (0, 2), out.stderr[-2000:]
    loaded = {m.split(".")[0] for m in _imported(out.stderr)}
    assert "ldpopt" in loaded and not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_postprocess_of_a_plain_csv_loads_neither_pandas_nor_scipy(tmp_path):
    """``postprocess --method norm-sub`` on a plain ``value,count`` CSV (the README's Emoji example)
    reads and writes it without pandas (and so without pyarrow), and Norm-Sub needs no scipy; the file
    it writes is what the library computes."""
    import numpy as np

    from ldpopt import methods, oracles

    counts = tmp_path / "counts.csv"
    counts.write_text("value,count\na,120\nb,80\nc,40\nd,10\ne,3\n")
    out = _python("-X", "importtime", "-m", "ldpopt.cli", "postprocess", "--counts", str(counts),
                  "--oracle", "oue", "--epsilon", "1", "--n", "200", "--method", "norm-sub",
                  "--out", str(tmp_path / "post.csv"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    loaded = {m.split(".")[0] for m in _imported(out.stderr)}
    heavy = loaded & {"pandas", "pyarrow", "scipy", "cvxpy"}
    assert "numpy" in loaded and not heavy, sorted(heavy)
    lines = (tmp_path / "post.csv").read_text().splitlines()
    assert lines[0] == "value,count,base,norm-sub" and [ln.split(",")[0] for ln in lines[1:]] == list("abcde")
    est = oracles.get("oue", epsilon=1.0, d=5).estimate([120, 80, 40, 10, 3], 200)
    got = np.array([float(ln.split(",")[3]) for ln in lines[1:]])
    assert np.array_equal(got, methods.get("norm-sub").func(est))


def test_every_public_subpackage_is_a_lazy_attribute():
    """Every public subpackage or module under ldpopt/ (no leading underscore; the command line and
    `make run`'s report aside) is an attribute of `ldpopt`, and `import ldpopt` still loads none of
    them, nor numpy: a new subpackage missing from ``ldpopt.SUBMODULES`` fails here."""
    import pathlib

    import ldpopt

    root = pathlib.Path(ldpopt.__file__).parent
    found = {p.parent.name for p in root.glob("*/__init__.py")} | {p.stem for p in root.glob("*.py")}
    public = {n for n in found if not n.startswith("_")} - {"cli", "report"}
    assert public == set(ldpopt.SUBMODULES)
    code = ("import sys, ldpopt\n"
            "assert not any(m.startswith('ldpopt.') for m in sys.modules), sorted(sys.modules)\n"
            "assert 'numpy' not in sys.modules\n"
            f"for name in {sorted(public)!r}:\n"
            "    mod = getattr(ldpopt, name)\n"
            "    assert mod.__name__ == 'ldpopt.' + name, (name, mod)\n"
            "    assert name in dir(ldpopt)\n")
    out = _python("-c", code)
    assert out.returncode == 0, out.stderr[-2000:]
