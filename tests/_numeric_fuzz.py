"""Every numeric option of every ``ldpopt`` subcommand given each extreme value, run in process:
the harness of tests/test_cli_numeric_fuzz.py (``python tests/_numeric_fuzz.py`` prints its table).

A case is one (subcommand, option, value): a small valid command line of that subcommand (its files
written once into a folder) with the option set to the value. Its outcome is one of

* ``error``: exit 2 with one line on stderr, no traceback (a clear refusal);
* ``ran``: exit 0 (or a subcommand's documented non-zero status, 1 or 3) for a value that is a
  number the option may take;
* ``silent``: exit 0 for ``nan``, ``±inf`` or a negative value, which no option of ldpopt takes, or
  an output that holds ``nan`` or ``inf``;
* ``traceback``: an exception out of ``main``, a status that is none of these, or a message on
  several lines;
* ``hang``: still running after ``TIMEOUT`` seconds (SIGALRM stops it).
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import re
import signal
import warnings
from collections import Counter
from pathlib import Path

EXTREMES = ("0", "-1", "1e-300", "1e300", "inf", "nan", "9223372036854775807")
NONSENSE = ("-1", "inf", "nan")
TIMEOUT = 5.0
#: subcommands whose main run is minutes (verify's papers, experiment's sweeps): only the refusal
#: of a value is run; a value the parser takes is recorded as 'ran' without running the command
PARSE_ONLY = ("verify", "experiment")
#: cases of about a second or more each (the shuffle model's numerical bound at δ = 1e-300; 2^63 - 1
#: users refused only after that bound's search; a bootstrap or a Dask run that is valid): run by
#: ``python tests/_numeric_fuzz.py``, left out of the suite's timed run
SLOW = {("postprocess", "--delta", "1e-300"), ("postprocess", "--shuffled-among", "9223372036854775807"),
        ("postprocess", "--central SCALE", "1e-300"), ("postprocess", "--beta", "0"),
        ("aggregate", "--workers", "9223372036854775807")}


class Hang(Exception):
    pass


def _files(root: Path) -> dict[str, str]:
    import numpy as np

    from ldpopt import oracles

    root.mkdir(parents=True, exist_ok=True)
    orc = oracles.get("oue", 1.0, 5)
    counts = orc.aggregate(orc.perturb(np.repeat(np.arange(5), [400, 300, 150, 100, 50]), rng=1))
    (root / "counts.csv").write_text("value,count\n" + "".join(f"{i},{c}\n" for i, c in enumerate(counts)))
    (root / "hist.csv").write_text("value,count\n0,40\n1,30\n2,20\n3,10\n")
    (root / "tuples.csv").write_text("A,B,C\n" + "".join(f"{i % 2},{i % 3},{i % 2}\n" for i in range(200)))
    (root / "problem.toml").write_text('objective = "cls"\n\n[[constraints]]\ntype = "simplex"\n')
    (root / "strings.txt").write_text("".join(w + "\n" for w in ["apple"] * 60 + ["berry"] * 30 + ["cherry"] * 10))
    return {"counts": str(root / "counts.csv"), "hist": str(root / "hist.csv"), "tuples": str(root / "tuples.csv"),
            "strings": str(root / "strings.txt"), "problem": str(root / "problem.toml")}


def cases(root: Path) -> list[tuple[str, str, list[str], str]]:
    """(subcommand, option, argv with the value as ``{v}``, how the value is written) for every
    numeric option, each on a command line where that option is read."""
    f = _files(root)
    pp = ["postprocess", "--counts", f["counts"], "--oracle", "oue", "--epsilon", "1", "--n", "1000",
          "--method", "norm-sub"]
    solve = ["solve", "--counts", f["counts"], "--oracle", "oue", "--epsilon", "1", "--n", "1000", "--problem", f["problem"]]
    choose = ["choose", "--counts", f["counts"], "--oracle", "oue", "--epsilon", "1", "--n", "1000", "--repeats", "3"]
    plan = ["plan", "--d", "5", "--n", "1000", "--epsilon", "1", "--oracles", "oue", "--methods", "base,norm-sub",
            "--repeats", "2"]
    perturb = ["perturb", "--histogram", f["hist"], "--oracle", "grr", "--epsilon", "1", "--seed", "1",
               "--out", str(root / "shards"), "--overwrite"]
    multi = ["multi", "--tuples", f["tuples"], "--epsilon", "1"]
    heavy = ["heavy-hitters", "--strings", f["strings"], "--epsilon", "2", "-k", "2", "--bytes", "2", "--step", "8"]
    verify = ["verify", "--quick", "--no-mc"]

    def opt(base, option, extra=()):
        out = [a for a in base]
        if option in out:  # replace the base's own value
            i = out.index(option)
            out[i + 1] = "{v}"
        else:
            out += [option, "{v}"]
        return out + list(extra)

    rows = []
    for option, extra in (("--epsilon", ()), ("--n", ()), ("--d", ()), ("--shuffled-among", ()),
                          ("--delta", ("--shuffled-among", "100000")), ("--ci", ()), ("--resamples", ("--ci", "0.9")),
                          ("--seed", ("--ci", "0.9"))):
        rows.append(("postprocess", option, opt(pp, option, extra)))
    rows.append(("postprocess", "--g", opt([*pp[:4], "olh", *pp[5:]], "--g")))
    rows.append(("postprocess", "--k", opt([*pp[:4], "ss", *pp[5:]], "--k")))
    rows.append(("postprocess", "--beta", opt(pp, "--beta", ("--robust", "ldprecover"))))
    rows.append(("postprocess", "--central SCALE", ["postprocess", "--counts", f["counts"], "--central", "laplace:{v}",
                                                    "--method", "norm-sub"]))
    rows.append(("postprocess", "--central --n", ["postprocess", "--counts", f["counts"], "--central", "laplace:2",
                                                  "--n", "{v}", "--method", "norm-sub"]))
    for option in ("--epsilon", "--n", "--d", "--time-limit"):
        rows.append(("solve", option, opt(solve, option)))
    for option in ("--epsilon", "--n", "--d", "--repeats", "--seed"):
        rows.append(("choose", option, opt(choose, option)))
    for option, extra in (("--d", ()), ("--n", ()), ("--epsilon", ()), ("--target", ()), ("--repeats", ()),
                          ("--seed", ()), ("--delta", ("--mechanism", "gaussian"))):
        base = plan if option != "--delta" else ["plan", "--d", "5", "--n", "1000", "--epsilon", "1"]
        rows.append(("plan", option, opt(base, option, extra)))
    for option in ("--epsilon", "--d", "--seed", "--shard-rows"):
        rows.append(("perturb", option, opt(perturb, option)))
    rows.append(("perturb", "--g", opt([*perturb[:4], "olh", *perturb[5:]], "--g")))
    rows.append(("aggregate", "--workers", ["aggregate", str(root / "shards"), "--scheduler", "threads",
                                           "--workers", "{v}"]))
    for option in ("--way", "--epsilon", "--seed"):
        rows.append(("multi", option, opt(multi, option)))
    for option in ("--epsilon", "-k", "--bytes", "--step", "--seed"):
        rows.append(("heavy-hitters", option, opt(heavy, option)))
    for option in ("--epsilons", "--n", "--d", "--seeds", "--solver-max-d", "--mc-d", "--mc-n"):
        rows.append(("verify", option, opt(verify, option)))
    rows.append(("experiment", "--jobs", ["experiment", "run", "no-such-config", "--jobs", "{v}"]))
    rows.append(("experiment", "--level", ["experiment", "coverage-table", "some-table", "--level", "{v}"]))
    return [(cmd, option, argv, v) for cmd, option, argv in rows for v in EXTREMES]


def _alarm(signum, frame):
    raise Hang


def run_case(argv: list[str], value: str, parse_only: bool = False) -> tuple[str, str]:
    """(outcome, the last line of stderr or the exception) of one case, as the module docstring says."""
    from ldpopt import cli

    args = [a.replace("{v}", value) for a in argv]
    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                if parse_only:
                    parser = cli.build_parser(args[0])
                    parser.parse_args(args)
                    code = 0
                else:
                    code = cli.main(args)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 2
    except Hang:
        return "hang", " ".join(args)
    except Exception as exc:  # noqa: BLE001 - what a user would see as a traceback
        return "traceback", f"{type(exc).__name__}: {str(exc)[:200]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    lines = err.getvalue().strip().splitlines()
    errors = [x for x in lines if "error" in x]
    if code == 2:
        if "Traceback" in err.getvalue() or len(errors) != 1:
            return "traceback", " | ".join(lines[-3:])
        return "error", errors[0]
    if code in (0, 1, 3):
        broken = re.search(r"\b(nan|-?inf)\b", out.getvalue(), re.IGNORECASE)
        if value in NONSENSE or broken:
            return "silent", f"output holds {broken.group(0)}" if broken else (lines[-1] if lines else "")
        return "ran", (lines[-1] if lines else "")
    return "traceback", f"exit {code}: " + " | ".join(lines[-3:])


def table(root: Path, skip=frozenset()) -> tuple[dict[str, Counter], list[tuple[str, str, str, str, str]]]:
    """Outcomes counted per subcommand, and every case that is a traceback, hang or silent acceptance
    (``skip``: (subcommand, option, value) cases not run)."""
    from ldpopt import cli

    cli.build_parser = functools.cache(cli.build_parser)  # one parser per subcommand, as main builds it
    counts: dict[str, Counter] = {}
    bad = []
    cwd = os.getcwd()
    os.chdir(root)
    try:
        for cmd, option, argv, value in cases(root):
            if (cmd, option, value) in skip:
                continue
            outcome, said = run_case(argv, value, parse_only=cmd in PARSE_ONLY)
            counts.setdefault(cmd, Counter())[outcome] += 1
            if outcome in ("traceback", "hang", "silent"):
                bad.append((cmd, option, value, outcome, said))
    finally:
        os.chdir(cwd)
    return counts, bad


if __name__ == "__main__":
    import sys
    import tempfile
    import time

    sys.path.insert(0, str(Path(__file__).parent))
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        counts, bad = table(Path(tmp))
    print("| subcommand | clear errors | ran | silent acceptances | tracebacks | hangs |")
    print("|---|---|---|---|---|---|")
    for cmd, c in counts.items():
        print(f"| {cmd} | {c['error']} | {c['ran']} | {c['silent']} | {c['traceback']} | {c['hang']} |")
    for row in bad:
        print(" ".join(row))
    print(f"{time.perf_counter() - t0:.1f} s")
