"""``ldpopt example [NAME ...] [--out DIR]``: write the example files that ship inside the package.

The README's and ``solve --help``'s commands use ``examples/emoji_oue_eps1_counts.csv`` and
``examples/solve_problem.toml``. In a checkout ``examples/`` is a link to the package's own copy
(``ldpopt/examples/``, package data); after ``pip install`` there is no checkout, so this command
writes the files out, found through :mod:`importlib.resources` wherever the package was installed.
Without NAME it lists them. An existing file is never replaced (it may hold the user's edits).
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

from ._args import InputError
from ._commands import help_of

__all__ = ["add_parser", "example_files"]


def example_files() -> dict:
    """``{file name: Traversable}`` of the examples shipped in the package (``ldpopt/examples/``)."""
    folder = resources.files("ldpopt") / "examples"
    return {f.name: f for f in sorted(folder.iterdir(), key=lambda f: f.name)
            if f.is_file() and not f.name.startswith(".")}


def _summary(f) -> str:
    """The file's first comment or docstring line: what it is."""
    for line in f.read_text(encoding="utf-8").splitlines():
        line = line.strip().strip('"').lstrip("#").strip()
        if line:
            return line if not line.startswith("value,") else "support counts (value,count), the README's input"
    return ""


def _run(args) -> int:
    files = example_files()
    if not args.names:
        width = max(map(len, files))
        for name, f in files.items():
            print(f"{name:<{width}}  {_summary(f)}")
        return 0
    names = list(files) if args.names == ["all"] else args.names
    unknown = [n for n in names if n not in files]
    if unknown:
        raise InputError(f"NAME {unknown[0]!r} is not an example; one of {', '.join(files)} or all")
    out = Path(args.out)
    if not out.is_dir():
        raise InputError(f"--out {out} is not an existing folder")
    targets = [out / n for n in names]
    existing = [str(t) for t in targets if t.exists() or t.is_symlink()]
    if existing:
        raise InputError(f"--out {out}: {existing[0]} already exists (not replaced; remove it or choose another --out)")
    from ._io import atomic_write

    atomic_write([(t, lambda tmp, f=files[n]: Path(tmp).write_bytes(f.read_bytes())) for t, n in zip(targets, names)])
    print(f"wrote {', '.join(map(str, targets))}", file=sys.stderr)
    return 0


def add_parser(sub) -> None:
    ep = sub.add_parser("example", help=help_of("example"),
                        description=__doc__.split("\n\n", 1)[1] if __doc__ else None)
    ep.add_argument("names", nargs="*", metavar="NAME", help="file names (as listed without NAME), or all")
    ep.add_argument("--out", default=".", help="existing folder to write into (default: the current one)")
    ep.set_defaults(func=_run)
