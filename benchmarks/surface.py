"""The public surface, counted: every package's ``__all__`` (ldpopt.SUBMODULES and the top level), the
module docstrings' lengths in lines (median, max, how many over 15) and the public overrides whose
own docstring repeats a section of their base's word for word.

Run: ``PYTHONPATH=. python benchmarks/surface.py [--json PATH]`` (about 10 s, the imports); it
measures the ldpopt on the path, with the docstring helpers of that tree's tests/test_docstrings.py.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import re
import statistics
import sys
import warnings
from pathlib import Path


def exports() -> dict[str, int]:
    import ldpopt

    out = {"ldpopt": len(ldpopt.__all__)}
    for sub in ldpopt.SUBMODULES:
        out[sub] = len(getattr(importlib.import_module(f"ldpopt.{sub}"), "__all__", None) or ())
    return out


def module_docstrings() -> dict[str, int]:
    import ldpopt

    root = Path(ldpopt.__file__).parent
    out = {}
    for path in sorted(root.rglob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=True)
        out[str(path.relative_to(root))] = len(doc.splitlines()) if doc else 0
    return out


def _sections(doc: str | None) -> dict[str, str]:
    parts = re.split(r"^(\w[\w ]*)\n-+\n", inspect.cleandoc(doc or ""), flags=re.MULTILINE)
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def overrides() -> tuple[int, list[str]]:
    """(public overrides of a documented ldpopt base with a docstring of their own, those repeating a
    section of the base's)."""
    import ldpopt

    sys.path.insert(0, str(Path(ldpopt.__file__).resolve().parents[1] / "tests"))
    import test_docstrings as td

    own, repeat = 0, []
    for full, obj, _member in td._documented():
        base = td.overridden(full, obj)
        if base is None or not (getattr(obj, "__doc__", None) or "").strip():
            continue
        own += 1
        mine, theirs = _sections(obj.__doc__), _sections(base.__doc__)
        if any(body and theirs.get(s) == body for s, body in mine.items()):
            repeat.append(full)
    return own, repeat


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="also write the numbers to this file")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    ex = exports()
    docs = module_docstrings()
    own, repeat = overrides()
    lengths = list(docs.values())
    res = {"exports": ex, "exports_total_packages": sum(v for k, v in ex.items() if k != "ldpopt"),
           "module_docstrings": {"modules": len(lengths), "median": statistics.median(lengths), "max": max(lengths),
                                 "over_15": sorted(k for k, v in docs.items() if v > 15)},
           "overrides": {"with_own_docstring": own, "repeating_a_base_section": len(repeat), "names": repeat}}
    for k, v in ex.items():
        print(f"{k:14s} {v}")
    print(f"packages total {res['exports_total_packages']}; top level {ex['ldpopt']}")
    print(f"module docstrings: {len(lengths)} modules, median {res['module_docstrings']['median']}, "
          f"max {res['module_docstrings']['max']}, over 15: {len(res['module_docstrings']['over_15'])}")
    print(f"overrides with their own docstring: {own}; repeating a base's section: {len(repeat)}")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    return res


if __name__ == "__main__":
    main()
