"""docs/extending.md as a newcomer follows it: its code runs, its example method (examples/my_method.py)
passes the conformance checks, and the command line and the example experiment config take it."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli import ldpopt as run_cli
from test_readme import blocks as readme_blocks

from ldpopt import methods
from ldpopt.experiments.config import load_config
from ldpopt.experiments.runner import run as run_experiment
from ldpopt.testing import check_method

ROOT = Path(__file__).resolve().parents[1]
# the guide's blocks as the docs test reads them (tests/test_readme.py): one parser of fences
BLOCKS = readme_blocks(ROOT / "docs" / "extending.md")
PYTHON = [b.source for b in BLOCKS if b.lang == "python"]
SHELL = [b.source for b in BLOCKS if b.lang == "bash" and b.source.startswith("ldpopt ")]


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch):
    """Each test loads the example afresh and leaves the registry as it found it."""
    monkeypatch.chdir(ROOT)
    yield
    if "shrink-uniform" in methods.names():
        methods.unregister("shrink-uniform")
    for key in [k for k, m in sys.modules.items()
                if k.startswith("_ldpopt_user_") and str(getattr(m, "__file__", "")).startswith(str(ROOT))]:
        del sys.modules[key]


def test_the_documented_file_registers_a_method_that_passes_the_checks():
    ns = {}
    exec(compile(PYTHON[0], "docs/extending.md", "exec"), ns)  # noqa: S102 (the doc is the test)
    done = check_method("shrink-uniform")
    assert done["problem"] == done["batched"] == done["output"] == 5


def test_the_example_file_passes_check_method_as_the_doc_runs_it(capsys):
    exec(compile(PYTHON[1], "docs/extending.md", "exec"), {})  # noqa: S102 (the doc is the test)
    done = eval(capsys.readouterr().out)
    assert done["problem"] == done["sums_to_one"] == done["output"] == 5


def test_the_python_walk_runs():
    with pytest.warns(Warning):  # the bootstrap's note on flagged entries
        exec(compile(PYTHON[2], "docs/extending.md", "exec"), {})  # noqa: S102 (the doc is the test)
    f = methods.postprocess(_est(), "shrink-uniform", lam=0.0)
    np.testing.assert_allclose(f, methods.postprocess(_est(), "norm-sub"), atol=1e-15)  # lam = 0 is Norm-Sub


def _est():
    import ldpopt

    return ldpopt.oracles.get("oue", epsilon=1.0, d=16).simulate(np.arange(16) * 50, rng=0)


def test_the_documented_command_line_runs():
    cmd = SHELL[0].split("\n")[0:2]
    args = " ".join(line.rstrip("\\ ") for line in cmd).split()[1:]
    assert args[0] == "postprocess" and "examples/my_method.py:shrink_uniform" in args
    proc = run_cli(*args, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    out = pd.read_csv(io.StringIO(proc.stdout))
    assert abs(out["shrink-uniform"].sum() - 1.0) < 1e-12 and out["shrink-uniform"].min() >= 0


def test_the_example_config_runs_the_method_beside_the_papers(tmp_path):
    cfg = load_config(ROOT / "examples" / "my_experiment.toml", quick=True)
    assert cfg.methods[-1] == f"{(ROOT / 'ldpopt' / 'examples' / 'my_method.py').resolve()}:shrink_uniform"
    table = run_experiment(ROOT / "examples" / "my_experiment.toml", quick=True, out=tmp_path, progress=False)
    assert set(table.method) == {"base", "norm-sub", "mle-apx", "shrink-uniform"}


def test_the_oracle_audit_example_catches_its_planted_leak(capsys):
    block = next(b for b in PYTHON if "class TaggedGRR" in b)
    exec(compile(block, "docs/extending.md", "exec"), {})  # noqa: S102 (the doc is the test)
    out = capsys.readouterr().out
    assert "fails audit: its reports prove ε >=" in out and "> the stated 1 " in out
