"""Counts that carry their provenance: the record beside a counts file (CSV sidecar ``FILE.meta.json``,
Parquet ``ldpopt`` metadata) fills what the command line leaves out and refuses a contradiction naming
both values; integer labels with gaps are not read as a smaller domain; results record their inputs
(objective parameters, SHA-256 digests); ``Estimate.save``/``load``; oracle parameters in experiment
configs; the messages that say what to do (``check_oracle``, ``aggregate`` without ``--plugin``).

The references are independent: a run with every option given and no record (what the commands did
before records were read), ``hashlib`` over the file's bytes, the oracle's own attributes."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples
from ldpopt import Estimate, oracles
from ldpopt.cli import main

# oracle -> (its record's parameters as the command line spells them: {param: (option, value)})
ORACLES = {
    "grr": {},
    "oue": {},
    "olh": {"g": ("--g", 8)},
    "ss": {"k": ("--k", 2)},
    "cms": {"k": ("--k", 4), "m": ("--oracle-param", 16), "hash_seed": ("--oracle-param", 3)},
}
FIELDS = ("oracle", "epsilon", "n", "d", "param")
D, EPS = 6, 1.0
SETTINGS = settings(max_examples=examples(15), deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _counts(tmp: Path, name: str, record: bool, seed: int = 0):
    """A counts CSV of real reports of oracle ``name`` (d = 6, values 0..5) and, with ``record``, its
    sidecar as ``ldpopt aggregate`` writes it (positions: labelled false). Returns (path, n, oracle)."""
    params = {k: v for k, (_, v) in ORACLES[name].items()}
    orc = oracles.get(name, EPS, D, **params)
    est = orc.simulate(np.array([400, 250, 150, 100, 60, 40]), seed)
    path = tmp / f"{name}.csv"
    path.write_text("value,count\n" + "".join(f"{v},{int(c)}\n" for v, c in enumerate(est.counts)))
    if record:
        meta = {"oracle": orc.name, "epsilon": EPS, "n": est.n, "d": D, "p": orc.p, "q": orc.q,
                "oracle_params": orc.structural_params(), "labelled": False}
        (tmp / f"{name}.csv.meta.json").write_text(json.dumps(meta))
    return path, est.n, orc


def _argv(name: str, path, n: int, drop: str | None = None, change: str | None = None) -> list[str]:
    """Every option the counts were collected with, ``drop`` left out, ``change`` given otherwise."""
    values = {"oracle": name, "epsilon": EPS, "n": n, "d": D}
    other = {"oracle": "oue" if name != "oue" else "grr", "epsilon": 2 * EPS, "n": n + 1, "d": D + 1}
    argv = ["--counts", str(path)]
    for key in ("oracle", "epsilon", "n", "d"):
        if key != drop:
            argv += [f"--{key}", str(other[key] if key == change else values[key])]
    for key, (option, value) in ORACLES[name].items():
        if drop == "param":
            continue
        v = value + 1 if change == "param" else value
        argv += [option, str(v)] if option != "--oracle-param" else [option, f"{key}={v}"]
    return argv


def _run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _command(command: str, tmp: Path) -> list[str]:
    if command == "solve":
        problem = tmp / "p.toml"
        problem.write_text('objective = "cls"\n')
        return ["solve", "--problem", str(problem), "--json"]
    if command == "choose":
        return ["choose", "--repeats", "2", "--methods", "norm-sub,norm", "--json"]
    return ["postprocess", "--method", "norm-sub", "--json"]


def _answer(command: str, out: str):
    doc = json.loads(out)
    if command == "choose":
        return [(r["method"], r["loss"]) for r in doc["ranking"]], doc["n"]
    return doc["data"]["base"], doc["n"]


@pytest.mark.parametrize("command", ["postprocess", "solve", "choose"])
@SETTINGS
@given(name=st.sampled_from(sorted(ORACLES)), field=st.sampled_from(FIELDS),
       how=st.sampled_from(["missing", "contradicts", "agrees"]))
def test_record_fills_refuses_or_agrees(tmp_path, capsys, command, name, field, how):
    if field == "param" and not ORACLES[name]:
        field = "epsilon"
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    bare = folder / "bare"
    bare.mkdir()
    path, n, orc = _counts(folder, name, record=True)
    plain, _, _ = _counts(bare, name, record=False)
    cmd = _command(command, folder)
    code, ref_out, ref_err = _run(cmd + _argv(name, plain, n), capsys)  # no record: as before
    assert code == 0, ref_err
    reference = _answer(command, ref_out)
    if how == "contradicts":
        code, out, err = _run(cmd + _argv(name, path, n, change=field), capsys)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1, err
        assert "contradicts" in err and "recorded in" in err and str(path) + ".meta.json" in err, err
        recorded = {"oracle": orc.name, "epsilon": "1", "n": str(n), "d": str(D)}
        if field == "param":
            key = next(iter(ORACLES[name]))
            assert f"{key} = {ORACLES[name][key][1]}" in err and str(ORACLES[name][key][1] + 1) in err, err
        else:
            assert f"{field} = " in err and recorded[field] in err, err
        assert out == ""
        return
    drop = field if how == "missing" else None
    code, out, err = _run(cmd + _argv(name, path, n, drop=drop), capsys)
    assert code == 0, err
    assert _answer(command, out) == reference  # the record gave what was left out, nothing else changed
    if how == "missing":
        note = [line for line in err.splitlines() if "note: from" in line]
        assert len(note) == 1 and str(path) + ".meta.json" in note[0], err
        filled = {"oracle": f"oracle {orc.name}", "epsilon": "epsilon 1", "n": f"n {n}", "d": f"d {D}",
                  "param": next(iter(ORACLES[name]), "")}
        assert filled[field] in note[0], note


@SETTINGS
@given(name=st.sampled_from(sorted(ORACLES)), drop=st.sampled_from(["oracle", "epsilon"]))
def test_without_a_record_oracle_and_epsilon_are_required(tmp_path, capsys, name, drop):
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    path, n, _ = _counts(folder, name, record=False)
    code, _, err = _run(["postprocess", "--method", "norm-sub"] + _argv(name, path, n, drop=drop), capsys)
    assert code == 2 and f"--{drop} is required" in err and len(err.strip().splitlines()) == 1, err


def test_parquet_metadata_is_a_record(tmp_path, capsys):
    from ldpopt.cli._io import write_table

    orc = oracles.get("olh", EPS, D, g=8)
    est = orc.simulate(np.array([400, 250, 150, 100, 60, 40]), 1)
    path = tmp_path / "c.parquet"
    write_table({"value": np.arange(D), "count": est.counts}, path, "parquet",
                {"oracle": "olh", "epsilon": EPS, "n": est.n, "d": D, "oracle_params": {"g": 8}, "labelled": False})
    code, out, err = _run(["postprocess", "--counts", str(path), "--method", "base", "--json"], capsys)
    assert code == 0 and "g 8" in err, err
    assert np.allclose(json.loads(out)["data"]["base"], est.f_tilde, rtol=0, atol=1e-12)
    code, _, err = _run(["postprocess", "--counts", str(path), "--g", "4"], capsys)
    assert code == 2 and "--g 4 contradicts g = 8" in err and "Parquet metadata" in err, err


def test_aggregate_then_postprocess_uses_the_recorded_g(tmp_path, capsys, monkeypatch):
    """OLH collected at g = 8, post-processed without --g: the record's g, not the default g = 4."""
    pytest.importorskip("dask")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "h.csv").write_text("value,count\n0,4180\n1,3000\n2,1500\n3,1320\n")
    assert main(["perturb", "--histogram", "h.csv", "--d", "4", "--oracle", "olh", "--epsilon", "1", "--g", "8",
                 "--seed", "3", "--out", "shards"]) == 0
    assert main(["aggregate", "shards", "--scheduler", "synchronous", "--no-progress", "--out", "counts.csv"]) == 0
    capsys.readouterr()
    code, out, err = _run(["postprocess", "--counts", "counts.csv", "--method", "base", "--json"], capsys)
    assert code == 0, err
    counts = np.loadtxt("counts.csv", delimiter=",", skiprows=1)[:, 1]
    want = oracles.get("olh", 1.0, 4, g=8).estimate(counts, 10_000).f_tilde
    assert np.allclose(json.loads(out)["data"]["base"], want, rtol=0, atol=1e-12)
    assert json.loads(out)["metadata"]["oracle_params"] == {"g": 8}


# -- integer labels with gaps ---------------------------------------------------------------------------

@SETTINGS
@given(values=st.lists(st.integers(0, 40), min_size=2, max_size=8, unique=True),
       spelling=st.sampled_from(["{}", "{}.0", "{}.00"]))
def test_integer_labels_with_gaps_need_d(tmp_path, capsys, values, spelling):
    """Integers with gaps, written as integers or as a float column writes them (``5.0``)."""
    path = Path(tempfile.mkdtemp(dir=tmp_path)) / "c.csv"
    path.write_text("value,count\n" + "".join(f"{spelling.format(v)},{10 + i}\n" for i, v in enumerate(values)))
    n = sum(10 + i for i in range(len(values)))
    code, out, err = _run(["postprocess", "--counts", str(path), "--oracle", "grr", "--epsilon", "1",
                           "--method", "base", "--json"], capsys)
    gap = max(values) - min(values) + 1 != len(values)
    if gap:
        assert code == 2 and "integers with gaps" in err and "--d" in err, err
        assert len(err.strip().splitlines()) == 1
        d = max(values) + 1 + 1
        code, out, err = _run(["postprocess", "--counts", str(path), "--oracle", "grr", "--epsilon", "1",
                               "--d", str(d), "--method", "base", "--json"], capsys)
        assert code == 0, err
        doc = json.loads(out)
        assert doc["d"] == d and len(doc["data"]["base"]) == d  # positions: the domain keeps its size
        counts = np.zeros(d)
        counts[values] = [10 + i for i in range(len(values))]
        assert np.allclose(doc["data"]["base"], oracles.get("grr", 1.0, d).estimate(counts, n).f_tilde, atol=1e-12)
    else:  # a run without a gap (ratings 1..5, years) stays a domain of labels
        assert code == 0 and json.loads(out)["d"] == len(values), err


def test_gap_issue_case_and_recorded_d(tmp_path, capsys):
    path = tmp_path / "c.csv"
    path.write_text("value,count\n0,600\n5,400\n")
    code, _, err = _run(["postprocess", "--counts", str(path), "--oracle", "grr", "--epsilon", "1"], capsys)
    assert code == 2 and "2 values from 0 to 5" in err and "give --d" in err, err
    (tmp_path / "c.csv.meta.json").write_text(json.dumps({"oracle": "grr", "epsilon": 1, "d": 6, "labelled": False}))
    code, out, err = _run(["postprocess", "--counts", str(path), "--method", "base", "--json"], capsys)
    assert code == 0 and json.loads(out)["d"] == 6 and "d 6" in err, err
    (tmp_path / "c.csv.meta.json").write_text(json.dumps({"oracle": "grr", "epsilon": 1, "d": 6, "labelled": True}))
    path.write_text("value,count\na,600\nb,400\n")
    code, _, err = _run(["postprocess", "--counts", str(path)], capsys)
    assert code == 2 and "holds d = 2 values" in err and "records d = 6" in err, err


@pytest.mark.parametrize("name, option", [("olh", "--k"), ("oue", "--g"), ("grr", "--k"), ("ss", "--g")])
def test_a_parameter_the_recorded_oracle_does_not_take_is_one_line(tmp_path, capsys, name, option):
    """With the oracle filled from the record, --g/--k for an oracle without that parameter is one
    error line naming the option (no note line above it)."""
    path, _n, _ = _counts(tmp_path, name, record=True)
    code, out, err = _run(["postprocess", "--counts", str(path), option, "3"], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert f"{option}: oracle {name} takes no {option[2:]}" in err, err
    plain = tmp_path / "bare.csv"  # no record: the same line
    plain.write_text(path.read_text())
    code, out, err = _run(["postprocess", "--counts", str(plain), "--oracle", name, "--epsilon", "1", "--n", str(_n),
                           option, "3"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and f"{option}: oracle {name} takes no" in err, err


@pytest.mark.parametrize("command", ["postprocess", "solve", "choose"])
def test_a_later_error_stays_one_line_and_the_note_follows_a_success(tmp_path, capsys, command):
    """The record's note is said once the command has run: an error after the record was read (an
    output that is a folder, a bad method) is the only line; a success ends with the note."""
    path, _n, _ = _counts(tmp_path, "olh", record=True)
    cmd = _command(command, tmp_path)
    bad = ["--out", str(tmp_path), "--format", "csv"] if command != "choose" else ["--methods", "no-such-method"]
    code, out, err = _run(cmd + ["--counts", str(path)] + bad, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "note" not in err, err
    code, out, err = _run(cmd + ["--counts", str(path)], capsys)
    assert code == 0 and err.strip().splitlines()[-1].startswith(f"ldpopt {command}: note: from"), err


def test_read_counts_takes_d_from_the_record_and_refuses_another(tmp_path):
    """The Python reader ``ldpopt.cli.read_counts``: positions with values left out are read in the
    recorded domain, a contradicting d is refused naming both values, no record reads as before."""
    from ldpopt.cli import InputError, read_counts

    path = tmp_path / "c.csv"
    path.write_text("value,count\n0,600\n5,400\n")
    with pytest.raises(InputError, match="integers with gaps"):
        read_counts(path)
    assert read_counts(path, 6)["count"].tolist() == [600, 0, 0, 0, 0, 400]
    (tmp_path / "c.csv.meta.json").write_text(json.dumps({"oracle": "grr", "epsilon": 1, "d": 6, "labelled": False}))
    assert read_counts(path)["count"].tolist() == [600, 0, 0, 0, 0, 400]
    with pytest.raises(InputError, match="d = 7 contradicts d = 6 recorded in .*c.csv.meta.json"):
        read_counts(path, 7)


@pytest.mark.parametrize("where", [".", "missing.csv", "folder"])
def test_no_counts_file_is_the_readers_error(tmp_path, capsys, monkeypatch, where):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    code, _, err = _run(["postprocess", "--counts", where, "--oracle", "grr", "--epsilon", "1"], capsys)
    assert code == 2 and err.startswith("ldpopt postprocess: error: --counts") and len(err.splitlines()) == 1, err


def test_a_broken_record_is_named_not_ignored(tmp_path, capsys):
    path, _n, _ = _counts(tmp_path, "grr", record=False)
    (tmp_path / "grr.csv.meta.json").write_text("{not json")
    code, _, err = _run(["postprocess", "--counts", str(path), "--oracle", "grr", "--epsilon", "1"], capsys)
    assert code == 2 and "grr.csv.meta.json" in err and "not valid JSON" in err, err
    (tmp_path / "grr.csv.meta.json").write_text(json.dumps({"epsilon": -1}))
    code, _, err = _run(["postprocess", "--counts", str(path), "--oracle", "grr", "--epsilon", "1"], capsys)
    assert code == 2 and "recorded epsilon -1" in err, err


# -- what results record --------------------------------------------------------------------------------

def _sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_meta_json_records_digests_and_objective_params(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("LDPOPT_PLUGINS", raising=False)  # --plugin names its file there: restored afterwards
    path, _n, _ = _counts(tmp_path, "olh", record=True)
    plugin = tmp_path / "plug.py"
    plugin.write_text("X = 1\n")
    obj = tmp_path / "obj.py"
    obj.write_text("import cvxpy as cp\n\ndef wls(f, estimate, weight=2.0, power=1):\n"
                   "    return weight * cp.sum_squares(f - estimate.f_tilde)\n")
    problem = tmp_path / "p.toml"
    problem.write_text('[objective]\nfunction = "obj.py:wls"\nparams = {weight = 3.5}\n')
    assert main(["--plugin", str(plugin), "solve", "--counts", str(path), "--problem", str(problem),
                 "--out", str(tmp_path / "s.csv")]) == 0
    meta = json.loads((tmp_path / "s.csv.meta.json").read_text())
    assert meta["objective_params"] == {"weight": 3.5}
    assert meta["sha256"]["counts"] == _sha(path) and meta["sha256"]["problem"] == _sha(problem)
    assert meta["sha256"]["plugins"] == {str(plugin): _sha(plugin)}
    assert _sha(obj) in meta["sha256"].values()  # the file the problem names
    assert main(["postprocess", "--counts", str(path), "--method", "norm-sub", "--out", str(tmp_path / "o.csv")]) == 0
    meta = json.loads((tmp_path / "o.csv.meta.json").read_text())
    assert meta["sha256"] == {"counts": _sha(path)} and meta["oracle_params"] == {"g": 8}
    capsys.readouterr()
    code, out, err = _run(["choose", "--counts", str(path), "--repeats", "2", "--methods", "norm-sub,norm",
                           "--seed", "5", "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["sha256"] == {"counts": _sha(path)} and doc["oracle_params"] == {"g": 8}, err
    assert doc["seed"] == 5


def test_a_class_objectives_parameters_are_recorded(tmp_path, capsys, monkeypatch):
    from ldpopt.problems import registry

    monkeypatch.setattr(registry, "_OBJECTIVES", dict(registry._OBJECTIVES))  # the example registers one
    path, _n, _ = _counts(tmp_path, "grr", record=True)
    shutil.copy(Path(__file__).resolve().parents[1] / "examples" / "my_objective.py", tmp_path / "my_objective.py")
    text = (tmp_path / "my_objective.py").read_text()
    cls = next(line.split("class ")[1].split("(")[0] for line in text.splitlines() if line.startswith("class ")
               and "Objective" in line)
    problem = tmp_path / "p.toml"
    problem.write_text(f'objective = "my_objective.py:{cls}"\n')
    code = main(["solve", "--counts", str(path), "--problem", str(problem), "--out", str(tmp_path / "s.csv")])
    capsys.readouterr()
    if code not in (0, 3):
        pytest.skip(f"the example objective does not solve this estimate (exit {code})")
    meta = json.loads((tmp_path / "s.csv.meta.json").read_text())
    held = {k: v for k, v in vars(_objective_of(tmp_path, cls)).items()
            if not k.startswith("_") and (v is None or isinstance(v, (bool, int, float, str)))}
    assert meta["objective_params"] == held and "delta" in held  # the constructor's stored parameter


def _objective_of(folder, cls):
    from ldpopt._userfunc import load_attribute

    return load_attribute(f"my_objective.py:{cls}", folder, "test")()


# -- Estimate.save / load --------------------------------------------------------------------------------

@settings(max_examples=examples(20), deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(ORACLES)), seed=st.integers(0, 10**6), ordered=st.booleans())
def test_estimate_save_load_round_trips(tmp_path, name, seed, ordered):
    params = {k: v for k, (_, v) in ORACLES[name].items()}
    est = oracles.get(name, 0.7, D, **params).simulate(np.array([40, 25, 15, 10, 6, 4]), seed)
    est = est.as_ordered() if ordered else est
    path = Path(tempfile.mkdtemp(dir=tmp_path)) / f"{name}.json"
    est.save(path)
    again = Estimate.load(path, oracle=name.upper(), epsilon=0.7, n=est.n, d=D, **params)
    assert (again.f_tilde == est.f_tilde).all() and (again.counts == est.counts).all()
    assert (again.oracle, again.n, again.epsilon, again.p, again.q, again.ordered) == \
        (est.oracle, est.n, est.epsilon, est.p, est.q, est.ordered)
    assert {k: again.meta[k] for k in params} == params
    for key, wrong in [("epsilon", 0.8), ("n", est.n + 1), ("d", D + 1), ("oracle", "hr"),
                       *((k, v + 1) for k, v in params.items())]:
        with pytest.raises(ValueError, match=f"^{key} = .* given contradicts {key} = .* recorded in "):
            Estimate.load(path, **{key: wrong})
    with pytest.raises(ValueError, match="records no 'gg'"):
        Estimate.load(path, gg=8)


def test_estimate_load_refuses_other_files(tmp_path):
    (tmp_path / "x.json").write_text(json.dumps({"value": 1}))
    with pytest.raises(ValueError, match="not an estimate saved by Estimate.save"):
        Estimate.load(tmp_path / "x.json")


# -- experiment configs ------------------------------------------------------------------------------------

def _config(folder: Path, oracles_line: str, kind: str = "full-domain") -> Path:
    path = folder / "t.toml"
    path.write_text("\n".join([
        'name = "t"', f'kind = "{kind}"', 'datasets = [{name = "zipf", n = 2000, d = 8, rng = 1}]',
        f"oracles = {oracles_line}", "epsilons = [1.0]", 'methods = ["base"]', "repetitions = 1"]))
    return path


def test_experiment_meta_records_the_configs_digest(tmp_path):
    from ldpopt import experiments

    path = _config(tmp_path, '[{name = "olh", g = 8}]')
    experiments.run(path, out=tmp_path / "results", progress=False)
    meta = json.loads(next((tmp_path / "results").rglob("meta.json")).read_text())
    assert meta["sha256"] == {"config": _sha(path)}
    assert meta["config"]["oracle_params"] == [{"g": 8}]


def test_config_oracle_params_reach_the_oracle(tmp_path):
    from ldpopt import experiments
    from ldpopt.experiments.runner import execute
    from ldpopt.experiments.toolkit import task_oracle

    cfg = experiments.config.load_config(_config(tmp_path, '["olh", {name = "olh", g = 8}, {name = "ss", k = 3}]'))
    tasks = experiments.runner.tasks_of(cfg)
    assert [task_oracle(t, 8).params().get("g", task_oracle(t, 8).params().get("k")) for t in tasks] == \
        [oracles.get("olh", 1.0, 8).g, 8, 3]
    assert len({t.key for t in tasks}) == 3 and tasks[1].key == "zipf__olh-g8__eps1__rep0000"
    assert tasks[0].seed_sequence().entropy == tasks[0].seed_sequence().entropy
    assert set(execute(tasks[1])["oracle"]) == {"olh(g=8)"}
    assert cfg.as_dict()["oracle_params"] == [{}, {"g": 8}, {"k": 3}]


@pytest.mark.parametrize("line, kind, words", [
    ('[{name = "olh", h = 8}]', "full-domain", ["oracles[0]", "takes no parameter 'h'", "g"]),
    ('[{name = "olh", g = [8]}]', "full-domain", ["oracles[0]", "g must be a number"]),
    ('[{name = "sw", bins = 8}]', "numeric", ["oracles[0]", "need a registered oracle"]),
    ('[{name = "grr", epsilon_2 = 1}]', "full-domain", ["takes no parameter 'epsilon_2'", "none"]),
    ('[{g = 8}]', "full-domain", ["oracles[0]", "an oracle name"]),
])
def test_config_oracle_params_are_checked_at_load(tmp_path, line, kind, words):
    from ldpopt import experiments

    with pytest.raises((ValueError, TypeError)) as info:
        experiments.config.load_config(_config(tmp_path, line, kind))
    msg = str(info.value)
    assert "\n" not in msg and all(w in msg for w in words), msg


def test_config_params_for_a_kind_that_would_ignore_them(tmp_path):
    from ldpopt import experiments
    from ldpopt.experiments.registry import kinds, takes_oracle_params

    other = next(k for k in kinds() if not takes_oracle_params(k))
    with pytest.raises(ValueError, match=f"kind '{other}' does not build its oracle"):
        experiments.config.check_oracle_params([{"name": "olh", "g": 8}], tmp_path / "t.toml", other)


# -- the messages that say what to do ----------------------------------------------------------------------

def test_check_oracle_names_the_parameter_params_does_not_return():
    from ldpopt.oracles.grr import GRR
    from ldpopt.testing import check_oracle

    class Scaled(GRR):  # a parameter that changes nothing but is declared structural, not in params()
        name = "scaled-grr-test"
        structural = ("h",)

        def __init__(self, epsilon, d, h=2):
            self.h = h
            super().__init__(epsilon, d)

    with pytest.raises(AssertionError) as info:
        check_oracle(Scaled(1.0, 6, h=3))
    msg = str(info.value)
    assert "h = 3 here, 2 rebuilt" in msg and "return h from params()" in msg and "'h': self.h" in msg, msg
