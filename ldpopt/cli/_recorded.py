"""What a counts file records about itself, held against the command line (``postprocess``,
``solve``, ``choose``): the record (:mod:`ldpopt._provenance`: a CSV's sidecar ``FILE.meta.json``, a
Parquet file's ``ldpopt`` metadata) fills what the command line leaves out, with one line on stderr
saying what it filled and from where, and a contradiction (oracle, an oracle parameter, ε, n, d) is a
one-line error naming both values, before the counts are read. Counts without a record are read as
they always were, with ``--oracle`` and ``--epsilon`` then required."""

from __future__ import annotations

from .._provenance import Recorded, read_recorded, same_value, sha256_of, show
from ._args import InputError

__all__ = ["apply_recorded", "check_recorded_d", "input_digests"]


def _contradiction(option: str, given, what: str, recorded, rec: Recorded, sep: str = " ") -> InputError:
    given = given if isinstance(given, str) else show(given)  # as typed on the command line
    return InputError(f"{option}{sep}{given} contradicts {what} = {show(recorded)} recorded in {rec.source} "
                      f"(the counts were collected with it; drop {option} or give the recorded value)")


def _given_params(args) -> dict:
    """{parameter: (value, the option that gave it)} of the command line's oracle parameters."""
    from ._params import oracle_params

    out = {k: (v, f"--{k}", " ") for k, v in (("g", args.g), ("k", args.k)) if v is not None}
    for key, value in oracle_params(args.oracle_param, args.oracle).items():
        out[key] = (value, f"--oracle-param {key}", "=")
    return out


def apply_recorded(args) -> Recorded | None:
    """Read the record of ``args.counts`` and reconcile it with ``args``, in place: a field the command
    line lacks is filled (``args.oracle``, ``args.epsilon``, ``args.n``; ``args.d`` when the record
    says the values are positions; the oracle's parameters in ``args.recorded_params``), with a line
    naming what and from where in ``args.recorded_note`` (printed on stderr by ``main`` once the
    command has run, so that a later error stays one line); a field given differently is an InputError naming both values.
    Returns the record (None: there is none, and ``--oracle`` and ``--epsilon`` must be given)."""
    from .. import oracles

    try:
        rec = read_recorded(args.counts)
    except ValueError as exc:  # a record that cannot be read is named, never ignored
        raise InputError(f"--counts: {exc}") from None
    args.recorded_params = {}
    if rec is None:
        for option, value in (("--oracle", args.oracle), ("--epsilon", args.epsilon)):
            if value is None:
                raise InputError(f"{option} is required: {args.counts} records no configuration (no "
                                 f"{args.counts}.meta.json beside it, or no 'ldpopt' metadata in a Parquet file)")
        return None
    filled = []
    if rec.oracle is not None:
        if args.oracle is None:
            try:
                oracles.oracle_class(rec.oracle)
            except ValueError:
                raise InputError(f"--oracle: {rec.source} records oracle {rec.oracle!r}, which is not registered "
                                 f"here: load the file that defines it, ldpopt --plugin FILE.py {args.command} ..., "
                                 f"or give --oracle FILE.py:NAME") from None
            args.oracle = rec.oracle
            filled.append(f"oracle {rec.oracle}")
        else:
            try:
                name = oracles.oracle_class(args.oracle).name
            except ValueError:
                name = None  # an unknown name: the oracle's own error, later, says so
            if name is not None and name.lower() != rec.oracle.lower():
                raise _contradiction("--oracle", args.oracle, "oracle", rec.oracle, rec)
    for option, attr in (("--epsilon", "epsilon"), ("--n", "n")):
        given, recorded = getattr(args, attr), getattr(rec, attr)
        if recorded is None:
            continue
        if given is None:
            setattr(args, attr, recorded)
            filled.append(f"{attr} {show(recorded)}")
        elif not same_value(given, recorded):
            raise _contradiction(option, given, attr, recorded, rec)
    if rec.d is not None:
        if args.d is not None and args.d != rec.d:
            raise _contradiction("--d", args.d, "d", rec.d, rec)
        if args.d is None and rec.labelled is False:  # the values are the positions 0..d-1
            args.d = rec.d
            filled.append(f"d {rec.d}")
    if args.oracle is None or args.epsilon is None:
        missing = "--oracle" if args.oracle is None else "--epsilon"
        raise InputError(f"{missing} is required: {rec.source} does not record it")
    if rec.params:
        from ._params import oracle_param_specs

        given = _given_params(args)
        takes = oracle_param_specs(args.oracle)
        for key, recorded in rec.params.items():
            if key in given:
                value, option, sep = given[key]
                if not same_value(value, recorded):
                    raise _contradiction(option, value, key, recorded, rec, sep)
            elif key in takes:  # what the constructor takes (a record may add descriptive fields)
                args.recorded_params[key] = recorded
                filled.append(f"{key} {show(recorded)}")
    shortcuts = [key for key in ("g", "k") if getattr(args, key, None) is not None]
    if shortcuts:  # before the note: an error stays one line
        from ._params import oracle_param_specs

        takes = oracle_param_specs(args.oracle)
        for key in shortcuts:
            if key not in takes:
                raise InputError(f"--{key}: oracle {args.oracle} takes no {key} (its parameters: "
                                 f"{', '.join(takes) or 'none'})")
    if filled:  # said by main once the command has run (an error stays one line)
        args.recorded_note = f"ldpopt {args.command}: note: from {rec.source}: {', '.join(filled)}"
    return rec


def check_recorded_d(table, rec: Recorded | None) -> None:
    """The counts file holds the d values its record states (labelled counts: one row per value)."""
    if rec is not None and rec.d is not None and table.d != rec.d:
        raise InputError(f"--counts: {table.path} holds d = {table.d} values, but {rec.source} records d = "
                         f"{rec.d}; give --d {rec.d} if the values are positions 0..{rec.d - 1}")


def input_digests(args, files: dict | None = None) -> dict:
    """SHA-256 digests of a run's inputs for its metadata: the ``--plugin`` files, and ``files``
    ({role: path}: the counts, the problem file, the files a problem names), those that are files."""
    from pathlib import Path

    out: dict[str, str | dict[str, str]] = {}
    for role, path in (files or {}).items():
        if path is not None and Path(path).is_file():
            out[role] = sha256_of(path)
    plugins: dict[str, str] = {}
    for ref in getattr(args, "plugin", None) or []:
        if Path(ref).is_file():  # a file (a module's name is not one)
            plugins[str(ref)] = sha256_of(ref)
    if plugins:
        out["plugins"] = plugins
    return out
