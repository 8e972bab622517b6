"""Seeded command lines over every ``ldpopt`` subcommand, run in process, and the verdict on each
(for tests/test_cli_fuzz.py and benchmarks/bench_cli_fuzz.py).

A case is a folder of input files, a command line run with that folder as the current one, what
must happen (``ok``: exit 0 and an output that passes the case's check; ``refuse``: exit 2 and one
error line naming the argument; ``either``: one of those two; ``interrupt``: a run long enough that
it is stopped by a Ctrl-C after its time and must exit 130) and the class it belongs to in the
table (collisions, overflows, malformed data, ...). For every case, whatever it expects: no
traceback, no run past its time, every input byte-identical afterwards, and nothing left behind
but the expected outputs of a successful run.

``cases(seed, count)`` draws ``count`` cases (each from one of the templates below, with seeded
variations); ``run_case(case, root)`` runs one in a fresh folder under ``root`` and returns
``(outcome, detail)``: ``ok``, ``refused``, ``interrupted`` (all three as expected), or a failure:
``clobbered``, ``traceback``, ``hang``, ``silent acceptance``, ``noisy error``, ``left behind``,
``wrong exit``. Only the standard library, numpy, pandas, pyarrow and ``ldpopt.cli.main`` are used,
so the same cases run against any checkout put first on ``sys.path``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import stat
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable

import numpy as np
import pandas as pd

N = 1000  # users behind every counts file
LABELS = ["a", "b", "c", "d", "e"]
FAILURES = ("clobbered", "traceback", "hang", "silent acceptance", "noisy error", "left behind", "wrong exit")


@dataclass
class Case:
    cls: str  # the row of the table
    what: str  # one line for a failure message
    argv: list
    expect: str  # ok | refuse | either | interrupt
    names: tuple = ()  # a refusal's line must contain one of these (the argument)
    setup: Callable | None = None  # setup(folder): files beyond the standard ones
    check: Callable | None = None  # check(folder, stdout, stderr) for an exit 0; raises if the output is wrong
    outputs: tuple = ()  # what a successful run may leave (paths relative to the folder)
    timeout: float = 20.0
    stdout_ok: bool = False  # the result goes to stdout (no file to check on disk)
    heavy: bool = False  # starts processes or runs long: the full set only
    inputs_may_change: tuple = field(default_factory=tuple)  # (none: every input must stay byte-identical)
    must_say: tuple = ()  # a refusal's line must also contain each of these
    must_not_say: tuple = ()  # ... and none of these (an option the user did not give)


# -- the standard inputs of every case folder -----------------------------------------------------------
def _counts(rng):
    return rng.binomial(N, rng.uniform(0.2, 0.5, len(LABELS)))


def standard_files(folder: Path, rng) -> None:
    c = _counts(rng)
    (folder / "counts.csv").write_text("value,count\n" + "".join(f"{v},{k}\n" for v, k in zip(LABELS, c)))
    (folder / "counts_d.csv").write_text("value,count\n" + "".join(f"{i},{k}\n" for i, k in enumerate(c)))
    g = rng.multinomial(N, np.full(len(LABELS), 1 / len(LABELS)))
    (folder / "grr.csv").write_text("value,count\n" + "".join(f"{v},{k}\n" for v, k in zip(LABELS, g)))
    (folder / "problem.toml").write_text('objective = "cls"\n[[constraints]]\ntype = "simplex"\n')
    (folder / "problem.json").write_text('{"objective": "cls", "constraints": [{"type": "simplex"}]}')
    rows = rng.integers(0, 3, (40, 3))
    (folder / "tuples.csv").write_text("A,B,C\n" + "".join(f"a{r[0]},b{r[1]},c{r[2]}\n" for r in rows))
    words = ["alpha", "beta", "gamma", "delta", "omega"]
    (folder / "strings.txt").write_text("".join(words[i] + "\n" for i in rng.choice(5, 300, p=[.4, .3, .15, .1, .05])))
    (folder / "hist.csv").write_text("value,count\n" + "".join(f"{v},{k}\n" for v, k in zip(LABELS, g)))
    pd.DataFrame({"value": rng.integers(0, 5, 200)}).to_csv(folder / "values.csv", index=False)


def _shards(folder: Path, oracle="oue", n_shards=2, labels=True):
    from ldpopt import oracles
    from ldpopt.aggregate.shards import write_shard

    o = oracles.get(oracle, 1.0, len(LABELS), **({"m": 8} if oracle == "cms" else {}))
    (folder / "shards").mkdir()
    for i in range(n_shards):
        vals = np.random.default_rng(i).integers(0, len(LABELS), 300)
        write_shard(folder / "shards" / f"part-{i:05d}.parquet", o, o.perturb(vals, np.random.default_rng(i)),
                    labels=tuple(LABELS) if labels else None)


def _partial(folder: Path, name="partial.json", nan=False):
    from ldpopt import oracles
    from ldpopt.aggregate import Partial

    p = Partial.from_counts(oracles.get("oue", 1.0, len(LABELS)), [10, 20, 30, 40, 50], 100, labels=tuple(LABELS))
    text = p.to_json()
    if nan:
        text = text.replace('"n": 100', '"n": NaN')
    (folder / name).write_text(text)


# -- checks of a successful run -------------------------------------------------------------------------
def _table(path: Path) -> pd.DataFrame:
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    if path.suffix == ".json":
        doc = json.loads(path.read_text())
        return pd.DataFrame(doc["data"])[doc["columns"]]
    return pd.read_csv(path, keep_default_na=False)


#: the methods these cases run that may leave negative entries (Norm: f̃ shifted to sum to 1)
MAY_BE_NEGATIVE = {"norm", "base"}


def check_post(out, methods=("norm-sub",)):
    """The output of a successful postprocess/solve: each method's column finite, summing to 1, and
    non-negative where the method promises it."""
    def check(folder, stdout, stderr):
        t = _table(folder / out)
        for m in methods:
            f = t[m].to_numpy(np.float64)
            assert np.all(np.isfinite(f)) and abs(f.sum() - 1) < 1e-6, (m, f)
            assert m in MAY_BE_NEGATIVE or f.min() >= -1e-12, (m, f)
    return check


def check_stdout_table(columns):
    def check(folder, stdout, stderr):
        t = pd.read_csv(io.StringIO(stdout))
        assert list(t.columns)[:len(columns)] == list(columns), list(t.columns)
        assert len(t) >= 1
    return check


def check_shards(folder_name, users, count=None):
    def check(folder, stdout, stderr):
        import pyarrow.parquet as pq

        files = sorted((folder / folder_name).glob("part-*.parquet"))
        assert files and (count is None or len(files) == count), files
        assert sum(pq.ParquetFile(f).metadata.num_rows for f in files) == users
        assert not [p for p in (folder / folder_name).iterdir() if p.name.startswith(".")]
    return check


def check_aggregate(out, users):
    def check(folder, stdout, stderr):
        t = _table(folder / out) if out else pd.read_csv(io.StringIO(stdout))
        c = t["count"].to_numpy(np.float64)
        assert np.all((c >= 0) & (c <= users)) and len(c) == len(LABELS)
    return check


def check_contains(text, where="stdout"):
    def check(folder, stdout, stderr):
        assert text in (stdout if where == "stdout" else stderr), (stdout[-300:], stderr[-300:])
    return check


def both(*checks):
    def check(folder, stdout, stderr):
        for c in checks:
            c(folder, stdout, stderr)
    return check


# -- the templates ---------------------------------------------------------------------------------------
PP = ["postprocess", "--oracle", "oue", "--epsilon", "1", "--n", str(N)]
OUT_SUFFIXES = [".csv", ".parquet", ".json"]


def _write(name, data: bytes):
    def setup(folder):
        (folder / name).write_bytes(data)
    return setup


def _link(name, target, hard=False):
    def setup(folder):
        if hard:
            os.link(folder / target, folder / name)
        else:
            os.symlink(target, folder / name)
    return setup


def _fifo(name):
    def setup(folder):
        os.mkfifo(folder / name)
    return setup


def _chain(*setups):
    def setup(folder):
        for s in setups:
            if s is not None:
                s(folder)
    return setup


def _chmod(name, mode):
    def setup(folder):
        os.chmod(folder / name, mode)
    return setup


def _collisions(rng):
    """An output path that is an input, written another way."""
    spell = [lambda n: n, lambda n: "./" + n, lambda n: f"../{{case}}/{n}", lambda n: "sub/../" + n]
    s = spell[int(rng.integers(len(spell)))]
    sub = lambda f: (f / "sub").mkdir()
    return [
        Case("collision", "postprocess --out = --counts", PP + ["--counts", "counts.csv", "--out", s("counts.csv")],
             "refuse", ("--out",), sub),
        Case("collision", "postprocess --out = a link to --counts",
             PP + ["--counts", "counts.csv", "--out", "link.csv"], "refuse", ("--out",), _link("link.csv", "counts.csv")),
        Case("collision", "postprocess --out = a hard link to --counts",
             PP + ["--counts", "counts.csv", "--out", "hard.csv"], "refuse", ("--out",),
             _link("hard.csv", "counts.csv", hard=True)),
        Case("collision", "postprocess --counts X.meta.json, --out X",
             PP + ["--counts", "post.csv.meta.json", "--out", "post.csv", "--d", "5"], "refuse", ("--out",),
             lambda f: (f / "post.csv.meta.json").write_bytes((f / "counts_d.csv").read_bytes())),
        Case("collision", "solve --out = --counts", ["solve"] + PP[1:] + ["--counts", "counts.csv", "--problem",
             "problem.toml", "--out", s("counts.csv")], "refuse", ("--out",), sub),
        Case("collision", "solve --out = --problem (json)", ["solve"] + PP[1:] + ["--counts", "counts.csv", "--problem",
             "problem.json", "--out", s("problem.json")], "refuse", ("--out",), sub),
        Case("collision", "multi --out = --tuples", ["multi", "--tuples", "tuples.csv", "--epsilon", "1",
             "--out", s("tuples.csv")], "refuse", ("--out",), sub),
        Case("collision", "heavy-hitters --out = --strings", ["heavy-hitters", "--strings", "strings.txt", "--epsilon",
             "4", "--bytes", "5", "--out", s("strings.txt")], "refuse", ("--out",), sub),
        Case("collision", "aggregate --out = a shard", ["aggregate", "shards", "--scheduler", "threads", "--no-progress",
             "--out", "shards/part-00000.parquet"], "refuse", ("--out",), _shards),
        Case("collision", "aggregate --partial = a shard", ["aggregate", "shards", "--scheduler", "threads",
             "--no-progress", "--partial", "shards/part-00001.parquet"], "refuse", ("--partial",), _shards),
        Case("collision", "aggregate --out = --partial", ["aggregate", "shards", "--scheduler", "threads",
             "--no-progress", "--out", "agg.json", "--partial", "./agg.json"], "refuse", ("--out", "--partial"), _shards),
        Case("collision", "aggregate --out into the shard folder", ["aggregate", "shards", "--scheduler", "threads",
             "--no-progress", "--out", "shards/new.parquet"], "refuse", ("--out",), _shards),
        Case("collision", "aggregate --partial = --merge-into", ["aggregate", "shards", "--scheduler", "threads",
             "--no-progress", "--merge-into", "partial.json", "--partial", "partial.json"], "refuse", ("--partial",),
             _chain(_shards, _partial)),
        Case("collision", "perturb --out holds --histogram", ["perturb", "--histogram", "out/h.csv", "--oracle", "oue",
             "--epsilon", "1", "--seed", "0", "--out", "out", "--overwrite"], "refuse", ("--out",),
             lambda f: ((f / "out").mkdir(), (f / "out" / "h.csv").write_bytes((f / "hist.csv").read_bytes()))),
    ]


def _folders(rng):
    """perturb's output folder: non-empty, missing parents, append, overwrite."""
    base = ["perturb", "--histogram", "hist.csv", "--oracle", "grr", "--epsilon", "1", "--seed", str(int(rng.integers(9)))]
    rows = str(int(rng.choice([100, 400, 1000])))
    nshards = -(-N // int(rows))
    return [
        Case("output folder", "perturb into a non-empty folder", base + ["--out", "shards"], "refuse", ("--out",),
             _shards),
        Case("output folder", "perturb --out with missing parents", base + ["--out", "no/such/shards"], "refuse",
             ("--out",)),
        Case("output folder", "perturb --parents", base + ["--out", "new/deep/shards", "--parents", "--shard-rows", rows],
             "ok", check=check_shards("new/deep/shards", N, nshards), outputs=("new",)),
        Case("output folder", "perturb --overwrite", base + ["--out", "shards", "--overwrite", "--shard-rows", rows], "ok",
             setup=_shards, check=check_shards("shards", N, nshards), inputs_may_change=("shards",)),
        Case("output folder", "perturb --append (same oracle)", ["perturb", "--histogram", "hist.csv", "--oracle", "oue",
             "--epsilon", "1", "--seed", "3", "--out", "shards", "--append", "--shard-rows", rows], "ok", setup=_shards,
             check=check_shards("shards", N + 600, 2 + nshards), inputs_may_change=("shards",)),
        Case("output folder", "perturb --append (another ε)", ["perturb", "--histogram", "hist.csv", "--oracle", "oue",
             "--epsilon", "2", "--seed", "3", "--out", "shards", "--append"], "refuse", ("--append",), _shards),
        Case("output folder", "perturb --append and --overwrite", base + ["--out", "shards", "--append", "--overwrite"],
             "refuse", ("--overwrite", "--append"), _shards),
        Case("output folder", "perturb into an empty folder", base + ["--out", "empty", "--shard-rows", rows], "ok",
             setup=lambda f: (f / "empty").mkdir(), check=check_shards("empty", N, nshards), outputs=("empty",)),
    ]


def _overflows(rng):
    big = str(rng.choice(["1e19", "9223372036854775808", "1e300", "99999999999999999999"]))
    return [
        Case("overflow", f"perturb histogram of {big} users", ["perturb", "--histogram", "big.csv", "--oracle", "olh",
             "--epsilon", "1", "--seed", "0", "--out", "o"], "refuse", ("--histogram",),
             _write("big.csv", f"value,count\na,{big}\nb,5\n".encode())),
        Case("overflow", "perturb of 1100 x 9e15 users (each count exact, the sum over 2^63)", ["perturb",
             "--histogram", "big.csv", "--oracle", "olh", "--epsilon", "1", "--seed", "0", "--out", "o"], "refuse",
             ("--histogram",), _write("big.csv", b"value,count\n" + b"".join(b"v%d,9000000000000000\n" % i
                                                                              for i in range(1100)))),
        Case("overflow", f"postprocess count {big}", PP[:-2] + ["--n", "1e18", "--counts", "big.csv"], "refuse",
             ("--counts", "--n"), _write("big.csv", f"value,count\na,{big}\nb,5\n".encode())),
        Case("overflow", f"postprocess --n {big}", PP[:-2] + ["--n", big, "--counts", "counts.csv"], "refuse", ("--n",)),
        Case("overflow", "postprocess --d 1e12", PP + ["--counts", "counts_d.csv", "--d", "1e12"], "refuse", ("--d",)),
        Case("overflow", "solve --d 1e12", ["solve"] + PP[1:] + ["--counts", "counts_d.csv", "--d", "1e12", "--problem",
             "problem.toml"], "refuse", ("--d",)),
        Case("overflow", "choose --repeats 1e9", ["choose"] + PP[1:] + ["--counts", "counts.csv", "--repeats", "1e9"],
             "refuse", ("--repeats",)),
        Case("overflow", "choose --repeats 1e30", ["choose"] + PP[1:] + ["--counts", "counts.csv", "--repeats", "1e30"],
             "refuse", ("--repeats",)),
        Case("overflow", f"plan --n {big}", ["plan", "--d", "10", "--n", big, "--epsilon", "1"], "refuse", ("--n",)),
        Case("overflow", "plan --repeats 1e30", ["plan", "--d", "10", "--n", "1000", "--epsilon", "1", "--repeats",
             "1e30"], "refuse", ("--repeats",)),
        Case("overflow", "perturb --shard-rows 1e30", ["perturb", "--histogram", "hist.csv", "--oracle", "grr",
             "--epsilon", "1", "--seed", "0", "--out", "o", "--shard-rows", "1e30"], "refuse", ("--shard-rows",)),
        Case("overflow", "heavy-hitters -k 1e30", ["heavy-hitters", "--strings", "strings.txt", "--epsilon", "4",
             "-k", "1e30"], "refuse", ("-k",)),
    ]


def _malformed(rng):
    nul_at = int(rng.integers(12, 30))
    text = (b"value,count\n" + b"".join(f"{v},{k}\n".encode() for v, k in zip(LABELS, [300, 200, 100, 50, 40])))
    nul = text[:nul_at] + b"\x00" + text[nul_at:]
    depth = int(rng.choice([2000, 50_000, 200_000]))
    deep = ('{"objective": "cls", "constraints": ' + "[" * depth + "]" * depth + "}").encode()
    bad_tree = str(rng.choice(["[[0,[1,2]],[0,[3,4]]]", "[[0,[1,2]],[1,[0]]]", "[[0,[1,2]],[3,[1,4]]]",
                               "[[0,[1,2]],[1,[3,4]],[3,[0]]]"]))
    tree_toml = f'objective = "cls"\n[[constraints]]\ntype = "nonnegative"\n[[constraints]]\ntype = "hierarchy"\n' \
                f"position_groups = {bad_tree}\n"
    solve = ["solve"] + PP[1:]
    return [
        Case("malformed data", "postprocess counts with a NUL byte", PP + ["--counts", "nul.csv"], "refuse",
             ("--counts",), _write("nul.csv", nul)),
        Case("malformed data", "solve counts with a NUL byte", solve + ["--counts", "nul.csv", "--problem",
             "problem.toml"], "refuse", ("--counts",), _write("nul.csv", nul)),
        Case("malformed data", "choose counts with a NUL byte", ["choose"] + PP[1:] + ["--counts", "nul.csv"],
             "refuse", ("--counts",), _write("nul.csv", nul)),
        Case("malformed data", "perturb histogram with a NUL byte", ["perturb", "--histogram", "nul.csv", "--oracle",
             "grr", "--epsilon", "1", "--seed", "0", "--out", "o"], "refuse", ("--histogram",), _write("nul.csv", nul)),
        Case("malformed data", "multi tuples with a NUL byte", ["multi", "--tuples", "nul.csv", "--epsilon", "1"],
             "refuse", ("--tuples",), _write("nul.csv", b"A,B\nx,y\nx\x00,z\nw,y\n")),
        Case("malformed data", "heavy-hitters strings with a NUL byte", ["heavy-hitters", "--strings", "nul.txt",
             "--epsilon", "4", "--bytes", "3"], "refuse", ("--strings",), _write("nul.txt", b"abc\nab\x00\nabd\n" * 30)),
        Case("malformed data", "perturb values with a NUL byte", ["perturb", "--values", "nul.csv", "--d", "5",
             "--oracle", "grr", "--epsilon", "1", "--seed", "0", "--out", "o"], "refuse", ("--values",),
             _write("nul.csv", b"value\n1\n2\x00\n3\n")),
        Case("malformed data", f"problem file nested {depth} deep", solve + ["--counts", "counts.csv", "--problem",
             "deep.json"], "refuse", ("--problem",), _write("deep.json", deep)),
        Case("malformed data", f"malformed hierarchy {bad_tree}", solve + ["--counts", "counts.csv", "--problem",
             "tree.toml"], "refuse", ("--problem",), _write("tree.toml", tree_toml.encode())),
        Case("malformed data", "multi --marginals ''", ["multi", "--tuples", "tuples.csv", "--epsilon", "1",
             "--marginals", ""], "refuse", ("--marginals",)),
        Case("malformed data", "multi --marginals ';'", ["multi", "--tuples", "tuples.csv", "--epsilon", "1",
             "--marginals", ";"], "refuse", ("--marginals",)),
        Case("malformed data", "multi --reconstruct ''", ["multi", "--tuples", "tuples.csv", "--epsilon", "1",
             "--reconstruct", ""], "refuse", ("--reconstruct",)),
        Case("malformed data", "aggregate --merge-into a partial with NaN", ["aggregate", "shards", "--scheduler",
             "threads", "--no-progress", "--merge-into", "nan.json"], "refuse", ("--merge-into",),
             _chain(_shards, lambda f: _partial(f, "nan.json", nan=True))),
        Case("malformed data", "aggregate --merge-into garbage", ["aggregate", "shards", "--scheduler", "threads",
             "--no-progress", "--merge-into", "g.json"], "refuse", ("--merge-into",),
             _chain(_shards, _write("g.json", str(rng.choice(["{", "[]", "{}", "null", "x" * 40, '{"kind": 3}']))
                                    .encode()))),
        Case("malformed data", "aggregate --merge-into a missing file", ["aggregate", "shards", "--scheduler",
             "threads", "--no-progress", "--merge-into", "nope.json"], "refuse", ("--merge-into",), _shards),
        Case("malformed data", "aggregate of a folder with a non-shard .parquet", ["aggregate", "shards",
             "--scheduler", "threads", "--no-progress"], "refuse", ("shards", "parquet"),
             _chain(_shards, _write("shards/zz.parquet", b"PAR1 not really"))),
    ]


def _ranges(rng):
    eps = str(rng.choice(["60", "100", "800"]))
    V = ["verify", "--oracles", "grr", "oue", "--n", "1000", "--d", "4", "--no-mc"]
    return [
        Case("option range", "verify --solver NOSUCH", V + ["--solver", "NOSUCH"], "refuse", ("--solver",)),
        Case("option range", "verify --mc-d 5000", V[:-1] + ["--mc-d", "5000"], "refuse", ("--mc-d",)),
        Case("option range", f"verify --epsilons {eps}", V + ["--epsilons", eps, "--solver", "none"], "refuse",
             ("--epsilons",)),
        Case("option range", "verify --oracles nosuch", ["verify", "--oracles", "nosuch", "--no-mc"], "refuse",
             ("--oracles",)),
        Case("option range", "postprocess --epsilon 0", PP[:3] + ["--epsilon", str(rng.choice(["0", "-1", "nan",
             "inf"])), "--n", str(N), "--counts", "counts.csv"], "refuse", ("--epsilon",)),
        Case("option range", "postprocess --method nosuch", PP + ["--counts", "counts.csv", "--method", "nosuch"],
             "refuse", ("--method", "nosuch")),
        Case("option range", "postprocess --ci 1.5", PP + ["--counts", "counts.csv", "--ci", "1.5"], "refuse", ("--ci",)),
        Case("option range", "heavy-hitters --bytes 9", ["heavy-hitters", "--strings", "strings.txt", "--epsilon", "4",
             "--bytes", "9"], "refuse", ("--bytes",)),
        Case("option range", "multi --way 9", ["multi", "--tuples", "tuples.csv", "--epsilon", "1", "--way", "9"],
             "refuse", ("--way",)),
        Case("option range", "choose --query topk:99", ["choose"] + PP[1:] + ["--counts", "counts.csv", "--query",
             "topk:99"], "refuse", ("topk", "--query")),
        Case("option range", "plan --query topk:99", ["plan", "--d", "10", "--n", "1000", "--epsilon", "1", "--query",
             "topk:99"], "refuse", ("--query",)),
        Case("option range", "plan --prior of another shape", ["plan", "--d", "10", "--n", "1000", "--epsilon", "1",
             "--prior", str(rng.choice(["zipf:-1", "beta:1", "tied:11", "nosuch"]))], "refuse", ("--prior",)),
        Case("option range", "plan --mechanism nosuch", ["plan", "--d", "10", "--n", "1000", "--epsilon", "1",
             "--mechanism", str(rng.choice(["nosuch", "gauss", "local,nosuch"]))], "refuse", ("--mechanism",)),
        Case("option range", "plan --delta 0 for a Gaussian", ["plan", "--d", "10", "--n", "1000", "--epsilon", "1",
             "--mechanism", str(rng.choice(["gaussian", "discrete-gaussian"])), "--delta", "0"], "refuse",
             ("--delta",)),
        Case("option range", "postprocess --format parquet --out x.csv", PP + ["--counts", "counts.csv", "--format",
             "parquet", "--out", "x.csv"], "refuse", ("--format",)),
        Case("option range", "aggregate --scheduler nosuch", ["aggregate", "shards", "--scheduler", "nosuch",
             "--no-progress"], "refuse", ("scheduler",), _shards),
        Case("option range", "experiment run nosuch", ["experiment", "run", "nosuch-config"], "refuse", ("nosuch",)),
        Case("option range", "example nosuch", ["example", "nosuch.csv", "--out", "."], "refuse", ("nosuch",)),
    ]


def _encodings(rng):
    text = "value,count\n" + "".join(f"{v},{k}\n" for v, k in zip(["é", "ü", "日本", "a b", "x"], [300, 200, 100, 50, 9]))
    enc = str(rng.choice(["utf-16", "latin-1", "utf-8-sig", "cp1252", "utf-32"]))
    crlf = text.replace("\n", "\r\n").encode()
    return [
        Case("encoding", f"postprocess counts in {enc}", PP + ["--counts", "enc.csv", "--out", "o.csv", "--method",
             "norm-sub"], "either", ("--counts",), _write("enc.csv", text.encode(enc, errors="replace")),
             check_post("o.csv"), ("o.csv", "o.csv.meta.json")),
        Case("encoding", "postprocess UTF-8 labels", PP + ["--counts", "u.csv", "--out", "o.csv", "--method",
             "norm-sub"], "ok", (), _write("u.csv", text.encode()), check_post("o.csv"), ("o.csv", "o.csv.meta.json")),
        Case("encoding", "postprocess CRLF line ends", PP + ["--counts", "crlf.csv", "--out", "o.parquet", "--method",
             "norm-sub"], "either", ("--counts",), _write("crlf.csv", crlf), check_post("o.parquet"), ("o.parquet",)),
        Case("encoding", f"multi tuples in {enc}", ["multi", "--tuples", "t.csv", "--epsilon", "1", "--post", "none"],
             "either", ("--tuples",), _write("t.csv", "A,B\né,ü\né,x\nw,ü\nw,x\n".encode(enc, errors="replace")),
             check_stdout_table(["marginal", "cell"]), stdout_ok=True),
        Case("encoding", f"heavy-hitters strings in {enc}", ["heavy-hitters", "--strings", "s.txt", "--epsilon", "4",
             "--bytes", "4"], "either", ("--strings",), _write("s.txt", ("日本語\nécole\n" * 50).encode(enc,
             errors="replace")), check_stdout_table(["string", "frequency"]), stdout_ok=True),
    ]


def _special(rng):
    dev = "/dev/null"
    return [
        Case("special file", "postprocess --counts /dev/null", PP + ["--counts", dev], "refuse", ("--counts",)),
        Case("special file", "postprocess --counts a FIFO", PP + ["--counts", "fifo.csv"], "refuse", ("--counts",),
             _fifo("fifo.csv")),
        Case("special file", "postprocess --counts a folder", PP + ["--counts", "."], "refuse", ("--counts",)),
        Case("special file", "postprocess --out /dev/null", PP + ["--counts", "counts.csv", "--out", dev, "--format",
             "csv"], "refuse", ("--out",)),
        Case("special file", "postprocess --out a FIFO", PP + ["--counts", "counts.csv", "--out", "fifo.csv"], "refuse",
             ("--out",), _fifo("fifo.csv")),
        Case("special file", "solve --problem a FIFO", ["solve"] + PP[1:] + ["--counts", "counts.csv", "--problem",
             "fifo.toml"], "refuse", ("--problem",), _fifo("fifo.toml")),
        Case("special file", "multi --tuples a FIFO", ["multi", "--tuples", "fifo.csv", "--epsilon", "1"], "refuse",
             ("--tuples",), _fifo("fifo.csv")),
        Case("special file", "heavy-hitters --strings /dev/null", ["heavy-hitters", "--strings", dev, "--epsilon", "4"],
             "refuse", ("--strings",)),
        Case("special file", "perturb --histogram a FIFO", ["perturb", "--histogram", "fifo.csv", "--oracle", "grr",
             "--epsilon", "1", "--seed", "0", "--out", "o"], "refuse", ("--histogram",), _fifo("fifo.csv")),
        Case("special file", "perturb --out a file", ["perturb", "--histogram", "hist.csv", "--oracle", "grr",
             "--epsilon", "1", "--seed", "0", "--out", "counts.csv"], "refuse", ("--out",)),
        Case("special file", "aggregate --merge-into a FIFO", ["aggregate", "shards", "--scheduler", "threads",
             "--no-progress", "--merge-into", "fifo.json"], "refuse", ("--merge-into",), _chain(_shards, _fifo("fifo.json"))),
        Case("special file", "aggregate of /dev/null", ["aggregate", dev, "--scheduler", "threads", "--no-progress"],
             "refuse", (dev,)),
    ]


def _permissions(rng):
    return [
        Case("permissions", "postprocess of an unreadable counts file", PP + ["--counts", "counts.csv", "--out", "o.csv",
             "--method", "norm-sub"], "either", ("--counts", "counts.csv"), _chmod("counts.csv", 0),
             check_post("o.csv"), ("o.csv", "o.csv.meta.json")),
        Case("permissions", "postprocess --out in a read-only folder", PP + ["--counts", "counts.csv", "--out",
             "ro/o.csv", "--method", "norm-sub"], "either", ("--out",),
             lambda f: ((f / "ro").mkdir(), os.chmod(f / "ro", 0o500)), check_post("ro/o.csv"), ("ro",)),
        Case("permissions", "perturb --out a read-only folder's child", ["perturb", "--histogram", "hist.csv",
             "--oracle", "grr", "--epsilon", "1", "--seed", "0", "--out", "ro/s"], "either", ("--out",),
             lambda f: ((f / "ro").mkdir(), os.chmod(f / "ro", 0o500)), check_shards("ro/s", N), ("ro",)),
    ]


def _method_all(rng):
    oracle = str(rng.choice(["cms", "hcms", "rappor"]))
    params = {"cms": ["--oracle-param", "m=8"], "hcms": ["--oracle-param", "m=8"], "rappor": []}[oracle]
    counts = "counts.csv"
    setup = None
    if oracle == "rappor":  # RAPPOR's support counts are multiples of 1/h: whole numbers are such multiples
        counts = "counts.csv"
    return [
        Case("--method all", f"postprocess --method all with {oracle}", ["postprocess", "--oracle", oracle, "--epsilon",
             "1", "--n", str(N), "--counts", counts, "--method", "all", "--out", "o.csv"] + params, "ok", (), setup,
             both(check_post("o.csv", ("norm-sub", "mle-apx")), check_contains("skipped em", "stderr")),
             ("o.csv", "o.csv.meta.json")),
        Case("--method all", f"choose --methods all with {oracle}", ["choose", "--oracle", oracle, "--epsilon", "1",
             "--n", str(N), "--counts", counts, "--methods", "all", "--repeats", "3"] + params, "ok", (), setup,
             both(check_contains("norm-sub"), check_contains("skipped em", "stderr")), stdout_ok=True),
        Case("--method all", "aggregate --method all with cms shards", ["aggregate", "shards", "--scheduler", "threads",
             "--no-progress", "--method", "all"], "ok", (), lambda f: _shards(f, "cms"),
             both(check_aggregate(None, 600), check_contains("skipped em", "stderr")), stdout_ok=True),
        Case("--method all", "postprocess --method em with cms (one method: an error naming it)", ["postprocess",
             "--oracle", "cms", "--epsilon", "1", "--n", str(N), "--counts", counts, "--method", "em",
             "--oracle-param", "m=8"], "refuse", ("--method em",)),
    ]


def _config(extra: str) -> bytes:
    return ('name = "tiny"\nkind = "full-domain"\ndatasets = [{name = "zipf", n = 2000, d = 8, rng = 1}]\n'
            'oracles = ["oue"]\nepsilons = [1.0]\nmethods = ["base", "norm-sub"]\n' + extra).encode()


def _values(rng):
    """Sizes, values and types checked before any work: ranges, finite, integral (and "1e30": an
    integer, too large), unique keys, a budget whose q underflows, frequencies in [0, 1], unique
    columns, integral seeds, a run that cannot fit the disk or the memory, a scheduler that is none."""
    big = str(rng.choice(["1e30", "1e19", "99999999999999999999"]))
    eps = str(rng.choice(["800", "750", "2000"]))
    freq = str(rng.choice(["2.0", "-0.5", "1.5"]))
    seed = str(rng.choice(["1.5", "-1", '"x"']))
    solve = ["solve"] + PP[1:]
    dup = str(rng.choice(['{"objective": "cls", "objective": "weighted-mle", "constraints": [{"type": "simplex"}]}',
                          '{"objective": "cls", "constraints": [{"type": "simplex", "type": "nonnegative"}]}']))
    return [
        Case("value check", f"postprocess --n {big} (integral, too large)", PP[:-2] + ["--n", big, "--counts",
             "counts.csv"], "refuse", ("--n",), must_say=("too large",)),
        Case("value check", f"postprocess --epsilon {eps} (q underflows)", PP[:3] + ["--epsilon", eps, "--n", str(N),
             "--counts", "counts.csv"], "refuse", ("--epsilon",)),
        Case("value check", f"choose --epsilon {eps} (q underflows)", ["choose", "--oracle", "oue", "--epsilon", eps,
             "--n", str(N), "--counts", "counts.csv", "--repeats", "3"], "refuse", ("--epsilon",)),
        Case("value check", "heavy-hitters -k 100000", ["heavy-hitters", "--strings", "strings.txt", "--epsilon", "4",
             "--bytes", "5", "-k", str(rng.choice(["100000", "5000", "1e6"]))], "refuse", ("-k",)),
        Case("value check", "solve, a JSON problem file with a duplicated key", solve + ["--counts", "counts.csv",
             "--problem", "dup.json"], "refuse", ("--problem",), _write("dup.json", dup.encode())),
        Case("value check", f"solve, a fixed frequency of {freq}", solve + ["--counts", "counts.csv", "--problem",
             "fixed.toml"], "refuse", ("--problem", "frequency"),
             _write("fixed.toml", f'objective = "cls"\n[[constraints]]\ntype = "simplex"\n[[constraints]]\n'
                                  f'type = "fixed"\npositions = [2]\nfrequency = {freq}\n'.encode())),
        Case("value check", "multi, a duplicated CSV column", ["multi", "--tuples", "dupcol.csv", "--epsilon", "1"],
             "refuse", ("--tuples",), _write("dupcol.csv", b"A,B,A\na0,b0,a1\na1,b1,a0\na0,b1,a0\n")),
        Case("value check", f"experiment run, seed = {seed} in the config", ["experiment", "run", "tiny.toml", "--out",
             "res", "--no-progress"], "refuse", ("seed",), _write("tiny.toml", _config(f"seed = {seed}\n"))),
        Case("value check", "experiment run, repetitions = 1e11 in the config", ["experiment", "run", "tiny.toml",
             "--out", "res", "--no-progress"], "refuse", ("repetitions",),
             _write("tiny.toml", _config("repetitions = 100000000000\n")), timeout=8.0),
        Case("value check", "experiment run --scheduler bogus", ["experiment", "run", "tiny.toml", "--out", "res",
             "--no-progress", "--scheduler", str(rng.choice(["bogus", "tcp://", "http://x:1"]))], "refuse",
             ("--scheduler",), _write("tiny.toml", _config("repetitions = 2\n")), timeout=8.0),
        Case("value check", "aggregate of shards of two oracles (no --merge-into)", ["aggregate", "shards",
             "--scheduler", "threads", "--no-progress"], "refuse", ("SHARDS", "shards"),
             lambda f: (_shards(f), (f / "s2").mkdir(), _shards(f / "s2", "grr"),
                        os.replace(f / "s2" / "shards" / "part-00000.parquet", f / "shards" / "part-00009.parquet")),
             must_not_say=("--merge-into",)),
        Case("value check", "perturb of 1e12 users (no room on the disk)", ["perturb", "--histogram", "big.csv",
             "--oracle", str(rng.choice(["grr", "oue", "olh"])), "--epsilon", "1", "--seed", "0", "--out", "o"],
             "refuse", ("--histogram", "--out"), _write("big.csv", b"value,count\na,500000000000\nb,500000000000\n"),
             timeout=8.0),
    ]


def _record(oracle="olh", labelled=True, **fields):
    """The counts' record (``counts.csv.meta.json``, or ``counts_d.csv``'s with ``labelled`` False) as
    ``ldpopt aggregate`` writes it: OLH at g = 8 by default, ε = 1, n = N, d = 5."""
    params = {"g": 8} if oracle == "olh" else {}
    doc = {"oracle": oracle, "epsilon": 1.0, "n": N, "d": len(LABELS), "oracle_params": params,
           "labelled": labelled, **fields}
    return _write("counts.csv.meta.json" if labelled else "counts_d.csv.meta.json", json.dumps(doc).encode())


def check_recorded_g(out):
    """postprocess with the record's OLH g = 8 (not the default g): Base is that oracle's estimate."""
    def check(folder, stdout, stderr):
        from ldpopt import oracles

        t = _table(folder / out)
        want = oracles.get("olh", 1.0, len(LABELS), g=8).estimate(t["count"].to_numpy(np.float64), N).f_tilde
        assert np.allclose(t["base"].to_numpy(np.float64), want, rtol=0, atol=1e-12), (t["base"].tolist(), want)
    return check


def _provenance(rng):
    """The counts' record (a CSV's sidecar FILE.meta.json) against the command line: every option the
    counts were collected with given, one of them otherwise (the oracle, a parameter, ε, n or d), is
    refused naming the option; what is left out is filled from the record (OLH's g among it, not its
    default); integer labels with gaps (also written as floats) are refused without a domain size."""
    cmd = str(rng.choice(["postprocess", "solve", "choose"]))
    extra = {"postprocess": [], "solve": ["--problem", "problem.toml"], "choose": ["--repeats", "2"]}[cmd]

    def given(**other):  # every option of the record, ``other`` given otherwise
        opts = {"--oracle": "olh", "--epsilon": "1", "--n": str(N), "--g": "8", **other}
        return [cmd, "--counts", "counts.csv", *extra, *(w for kv in opts.items() for w in kv)]

    g = str(rng.choice(["4", "3", "16"]))
    eps = str(rng.choice(["2", "0.5", "1.1"]))
    gap = str(rng.choice(["0,600\n5,400\n", "0.0,600\n5.0,400\n", "1,600\n3,300\n4,100\n"]))
    out = "o" + OUT_SUFFIXES[int(rng.integers(3))]
    outs = (out, out + ".meta.json") if out.endswith(".csv") else (out,)
    post = ["postprocess", "--counts", "counts.csv", "--method", "norm-sub", "--out", out]
    return [
        Case("provenance", f"{cmd} --g {g}, the counts recorded at g = 8", given(**{"--g": g}), "refuse", ("--g",),
             _record(), must_say=("contradicts", "8")),
        Case("provenance", f"{cmd} --epsilon {eps}, the counts recorded at 1", given(**{"--epsilon": eps}), "refuse",
             ("--epsilon",), _record(), must_say=("contradicts",)),
        Case("provenance", f"{cmd} --n {N + 1}, the counts recorded for n = {N}", given(**{"--n": str(N + 1)}),
             "refuse", ("--n",), _record(), must_say=("contradicts",)),
        Case("provenance", f"{cmd} --oracle oue, the counts recorded from olh", given(**{"--oracle": "oue", "--g": "8"})
             [:-2], "refuse", ("--oracle",), _record(), must_say=("contradicts", "olh")),
        Case("provenance", "postprocess --d 9, the counts recorded with d = 5", PP + ["--counts", "counts_d.csv",
             "--d", "9"], "refuse", ("--d",), _record("oue", labelled=False), must_say=("contradicts",)),
        Case("provenance", "postprocess, a record that is not JSON", PP + ["--counts", "counts.csv"], "refuse",
             ("--counts",), _write("counts.csv.meta.json", b"{oracle: olh"), must_say=("counts.csv.meta.json",)),
        Case("provenance", "postprocess, integer labels with gaps", ["postprocess", "--counts", "gap.csv", "--oracle",
             "grr", "--epsilon", "1"], "refuse", ("--counts",), _write("gap.csv", ("value,count\n" + gap).encode()),
             must_say=("--d",)),
        Case("provenance", "postprocess of OLH counts without --g (the record's g = 8)", post + ["--oracle", "olh",
             "--epsilon", "1", "--n", str(N)], "ok", (), _record(), both(check_post(out), check_recorded_g(out)), outs),
        Case("provenance", "postprocess with every option left out (from the record)", post, "ok", (), _record(),
             both(check_post(out), check_recorded_g(out)), outs),
    ]


def _valid(rng):
    suffix = OUT_SUFFIXES[int(rng.integers(3))]
    method = str(rng.choice(["norm-sub", "mle-apx", "norm", "power-ns"]))
    out = "o" + suffix
    outs = (out, out + ".meta.json") if suffix == ".csv" else (out,)
    seed = str(int(rng.integers(100)))
    return [
        Case("valid", f"postprocess --method {method}", PP + ["--counts", "counts.csv", "--method", method, "--out", out],
             "ok", (), None, check_post(out, (method,)), outs),
        Case("valid", "postprocess --d to stdout", PP + ["--counts", "counts_d.csv", "--d", "7", "--method", "norm-sub"],
             "ok", (), None, check_stdout_table(["value", "count", "base", "norm-sub"]), stdout_ok=True),
        Case("valid", "postprocess GRR without --n", ["postprocess", "--oracle", "grr", "--epsilon", "2", "--counts",
             "grr.csv", "--method", "norm-sub", "--out", out], "ok", (), None, check_post(out), outs),
        Case("valid", "solve", ["solve"] + PP[1:] + ["--counts", "counts.csv", "--problem", "problem.toml", "--out", out],
             "ok", (), None, check_post(out, ("f",)), outs),
        Case("valid", "choose", ["choose"] + PP[1:] + ["--counts", "counts.csv", "--repeats", "4", "--seed", seed],
             "ok", (), None, check_contains("norm-sub"), stdout_ok=True),
        Case("valid", "plan", ["plan", "--d", "20", "--n", "1e4", "--epsilon", "1", "--prior", "zipf:1.5", "--oracles",
             "oue", "--methods", "base,norm-sub", "--repeats", "3", "--seed", seed], "ok", (), None,
             check_contains("norm-sub"), stdout_ok=True),
        Case("valid", "plan --mechanism", ["plan", "--d", "20", "--n", "1e4", "--epsilon", "1", "--mechanism",
             "local,all", "--oracles", "oue", "--methods", "base,norm-sub", "--repeats", "3", "--seed", seed], "ok",
             (), None, check_contains("central:discrete-gaussian"), stdout_ok=True),
        Case("valid", "multi", ["multi", "--tuples", "tuples.csv", "--epsilon", "2", "--seed", seed, "--out", out],
             "ok", (), None, lambda f, o, e: _table(f / out).shape[0] > 0 or (_ for _ in ()).throw(AssertionError()),
             outs),
        Case("valid", "heavy-hitters", ["heavy-hitters", "--strings", "strings.txt", "--epsilon", "4", "--bytes", "5",
             "-k", "3", "--seed", seed, "--out", "hh.csv"], "ok", (), None,
             lambda f, o, e: list(pd.read_csv(f / "hh.csv").columns) == ["string", "frequency"] or
             (_ for _ in ()).throw(AssertionError()), ("hh.csv",)),
        Case("valid", "perturb", ["perturb", "--histogram", "hist.csv", "--oracle", str(rng.choice(["grr", "oue",
             "olh", "hr"])), "--epsilon", "1", "--seed", seed, "--out", "new", "--shard-rows", "300"], "ok", (), None,
             check_shards("new", N, 4), ("new",)),
        Case("valid", "aggregate", ["aggregate", "shards", "--scheduler", "threads", "--no-progress", "--out", out,
             "--partial", "p.json", "--method", "norm-sub"], "ok", (), _shards, check_aggregate(out, 600),
             outs + ("p.json",)),
        Case("valid", "aggregate --merge-into", ["aggregate", "shards", "--scheduler", "threads", "--no-progress",
             "--merge-into", "partial.json"], "ok", (), _chain(_shards, _partial), check_aggregate(None, 700),
             stdout_ok=True),
        Case("valid", "example", ["example", "emoji_oue_eps1_counts.csv", "--out", "ex"], "ok", (),
             lambda f: (f / "ex").mkdir(), lambda f, o, e: (f / "ex" / "emoji_oue_eps1_counts.csv").is_file() or
             (_ for _ in ()).throw(AssertionError()), ("ex",)),
        Case("valid", "experiment list", ["experiment", "list"], "ok", (), None, lambda f, o, e: None, stdout_ok=True),
    ]


def _valid_slow(rng):
    """Successes that cost seconds (verify imports cvxpy and runs its claims)."""
    return [
        Case("valid", "verify (a small grid)", ["verify", "--oracles", "grr", "--epsilons", "1", "--n", "1000", "--d", "4",
             "--no-mc", "--solver", "none"], "ok", (), None, check_contains("holds"), stdout_ok=True, timeout=60),
    ]


def _long(rng):
    """Runs that would take long: they print progress and stop cleanly on Ctrl-C (sent after their time)."""
    return [
        Case("long run", "perturb of 2e9 users, Ctrl-C", ["perturb", "--histogram", "big.csv", "--oracle", "grr",
             "--epsilon", "1", "--seed", "0", "--out", "shards", "--overwrite"], "interrupt", (),
             _chain(_shards, _write("big.csv", b"value,count\na,1000000000\nb,1000000000\n")), timeout=3.0,
             inputs_may_change=()),
        Case("long run", "aggregate --workers 1000 (local cluster)", ["aggregate", "shards", "--scheduler", "local", "--workers", "1000",
             "--no-progress"], "ok", (), _shards, both(check_aggregate(None, 600), check_contains("--workers",
             "stderr")), stdout_ok=True, heavy=True, timeout=120),
        Case("long run", "postprocess --d 1e7 --method all, Ctrl-C", PP + ["--counts", "counts_d.csv", "--d", "1e7",
             "--out", "o.parquet"], "interrupt", (), timeout=8.0, heavy=True),
    ]


TEMPLATES = [_collisions, _folders, _overflows, _malformed, _ranges, _values, _provenance, _encodings, _special, _permissions,
             _method_all, _valid, _valid_slow, _long]


def cases(seed: int, rounds: int, heavy: bool = True) -> list[Case]:
    """``rounds`` draws of every template (seeded by (seed, round)): the cases of each round differ
    in their random parts (spellings of a path, numbers, encodings, methods, formats)."""
    out = []
    for r in range(rounds):
        rng = np.random.default_rng([seed, r])
        for t in TEMPLATES:
            out += [c for c in t(rng) if heavy or not c.heavy]
    return out


# -- running one case --------------------------------------------------------------------------------------
class _Timeout(BaseException):
    """Raised in the case by its timer: a run past its time (not an Exception, so nothing catches it)."""


def _snapshot(folder: Path) -> dict:
    snap = {}
    for p in sorted(folder.rglob("*")):
        rel = str(p.relative_to(folder))
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            snap[rel] = ("link", os.readlink(p))
        elif stat.S_ISREG(st.st_mode):
            os.chmod(p, st.st_mode | stat.S_IRUSR) if not st.st_mode & stat.S_IRUSR else None
            snap[rel] = ("file", p.read_bytes())
            os.chmod(p, st.st_mode)
        elif stat.S_ISDIR(st.st_mode):
            snap[rel] = ("dir", None)
        else:
            snap[rel] = ("special", stat.S_IFMT(st.st_mode))
    return snap


def run_main(argv, timeout: float, interrupt: bool):
    """``ldpopt.cli.main(argv)`` with stdout/stderr captured and a timer: after ``timeout`` s a
    KeyboardInterrupt (``interrupt``: a user's Ctrl-C) or :class:`_Timeout` is raised in it.
    Returns (exit code, stdout, stderr); code -1: a traceback (an exception escaped main), -2: it
    ran past its time."""
    import ldpopt.cli as cli

    def alarm(signum, frame):
        raise KeyboardInterrupt if interrupt else _Timeout()

    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
            warnings.simplefilter("default")
            try:
                code = cli.main([str(a) for a in argv])
            except SystemExit as exc:  # argparse
                code = exc.code if isinstance(exc.code, int) else 2
            except _Timeout:
                code = -2
            except Exception as exc:  # noqa: BLE001 - what the user would see as a traceback
                err.write(f"Traceback: {type(exc).__name__}: {exc}\n")
                code = -1
            except KeyboardInterrupt:  # escaped main: the user would see a traceback
                err.write("Traceback: KeyboardInterrupt\n")
                code = -1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return code, out.getvalue(), err.getvalue()


def in_process(argv, case: Case, folder: Path):
    """(code, stdout, stderr) of ``argv`` run by :func:`run_main` with ``folder`` as the current one."""
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        return run_main(argv, case.timeout, case.expect == "interrupt")
    finally:
        os.chdir(cwd)


def prepare(case: Case, root: Path, index: int, seed: int) -> tuple[Path, list, dict]:
    """The case's folder ``root/case<index>`` with its inputs, its argv, and the inputs' snapshot."""
    folder = root / f"case{index}"
    folder.mkdir()
    standard_files(folder, np.random.default_rng([seed, index]))
    if case.setup is not None:
        case.setup(folder)
    argv = [a.replace("{case}", folder.name) if isinstance(a, str) else a for a in case.argv]
    return folder, argv, _snapshot(folder)


def run_case(case: Case, root: Path, index: int, seed: int, runner=in_process) -> tuple[str, str]:
    """Run ``case`` in ``root/case<index>`` (``runner(argv, case, folder)`` → (code, stdout, stderr):
    in process by default); (outcome, detail) as in the module docstring."""
    folder, argv, before = prepare(case, root, index, seed)
    code, stdout, stderr = runner(argv, case, folder)
    try:
        return _verdict(case, folder, before, code, stdout, stderr)
    finally:
        for p in [folder, *folder.rglob("*")]:  # the permission cases: let the folder be removed later
            if p.is_dir() and not p.is_symlink():
                os.chmod(p, 0o755)


def _changed_inputs(case, folder, before) -> list[str]:
    after = _snapshot(folder)
    keep = case.inputs_may_change if case.expect != "interrupt" else ()
    return [k for k, v in before.items() if not any(k == m or k.startswith(m + "/") for m in keep)
            and after.get(k) != v]


def _left(case, folder, before, success: bool) -> list[str]:
    allowed = case.outputs if success else ()
    return [str(p.relative_to(folder)) for p in folder.iterdir()
            if p.name not in {k.split("/")[0] for k in before} and p.name not in allowed] + \
        [str(p.relative_to(folder)) for p in folder.rglob(".*.tmp")]


def _verdict(case, folder, before, code, stdout, stderr) -> tuple[str, str]:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    changed = _changed_inputs(case, folder, before)
    if changed:
        return "clobbered", f"exit {code}; inputs changed: {changed[:3]}"
    if code == -2:
        return "hang", f"still running after {case.timeout} s"
    if code == -1 or "Traceback" in stderr:
        return "traceback", (lines[-1] if lines else "")[:300]
    if case.expect == "interrupt":
        left = _left(case, folder, before, False)
        if code == 130 and not left and lines and "interrupted" in lines[-1]:  # (a progress bar may precede it)
            return "interrupted", lines[-1]
        if code == 0:
            return "silent acceptance", "finished a run that should have been long"
        return ("left behind", f"{left}") if left else ("wrong exit", f"exit {code}: {lines[-1:]} ")
    if code == 0:
        if case.expect == "refuse":
            return "silent acceptance", f"exit 0: {(lines[-1] if lines else stdout[-200:])[:300]}"
        try:
            case.check(folder, stdout, stderr)
        except Exception as exc:  # noqa: BLE001
            return "silent acceptance", f"exit 0 but the output is wrong: {type(exc).__name__}: {str(exc)[:200]}"
        left = _left(case, folder, before, True)
        return ("left behind", f"{left}") if left else ("ok", lines[-1] if lines else "")
    if code == 2:
        if case.expect == "ok":
            return "wrong exit", f"exit 2: {lines[-1] if lines else ''}"[:300]
        usage = lines and lines[0].startswith("usage:")
        errors = [line for line in lines if "error" in line]
        if not errors or (len(lines) != 1 and not usage):
            return "noisy error", f"{len(lines)} lines: {' | '.join(lines)[:300]}"
        if case.names and not any(n in errors[-1] for n in case.names):
            return "noisy error", f"names none of {case.names}: {errors[-1][:300]}"
        if any(n not in errors[-1] for n in case.must_say) or any(n in errors[-1] for n in case.must_not_say):
            return "noisy error", f"misleading: must say {case.must_say}, not {case.must_not_say}: {errors[-1][:300]}"
        left = _left(case, folder, before, False)
        return ("left behind", f"{left}: {errors[-1]}") if left else ("refused", errors[-1])
    return "wrong exit", f"exit {code}: {' | '.join(lines)[-300:]}"


def table(results) -> dict:
    """{class: {outcome: count}} of ``results`` (a list of (case, outcome, detail))."""
    out: dict = {}
    for case, outcome, _ in results:
        row = out.setdefault(case.cls, {})
        row[outcome] = row.get(outcome, 0) + 1
    return out
