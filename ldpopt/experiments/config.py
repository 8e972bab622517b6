"""Experiment configurations: a TOML file describes a sweep.

Details: docs/experiments.md, section `ldpopt.experiments.config`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CONFIG_DIR", "DATA_DIR", "ExperimentConfig", "check_oracle_params", "check_oracles", "config_paths",
           "find_config", "load_config"]

# the repository's top-level experiments/, reached through the link ldpopt/experiments/data (a
# checkout, an editable install) or installed there as package data (`pip install .`)
DATA_DIR = Path(__file__).resolve().parent / "data"
CONFIG_DIR = DATA_DIR / "configs"


@dataclass(frozen=True)
class ExperimentConfig:
    """A validated experiment config (docs/experiments.md): what :func:`load_config` returns.

    Parameters
    ----------
    name : str
        The experiment's name (its results folder).
    kind : str
        The task kind (:func:`~ldpopt.experiments.task_kinds`).
    datasets : tuple
        Dataset specs (a name, or a table of loader arguments).
    oracles : tuple of str
        Oracle names.
    oracle_params : tuple, default ()
        Per oracle (aligned with ``oracles``), its constructor parameters as sorted ``(name, value)``
        items: an ``oracles`` entry written as a table, ``{name = "olh", g = 8}``; () when none has any.
    epsilons : tuple of float
        The ε axis.
    methods : tuple of str
        Methods applied to every estimate.
    repetitions : int, default 30
        Repetitions per cell.
    seed : int, default 2020
        Base seed.
    params : dict, optional
        Passed to the task.
    description : str, default ""
        Free text.
    source : str, default ""
        The TOML file's path.
    plugins : tuple of str, default ()
        ``FILE.py:NAME`` oracle files each task loads.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ldpopt import experiments
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "tiny.toml").write_text("\\n".join([
    ...     'name = "tiny"', 'kind = "full-domain"', 'datasets = [{name = "zipf", n = 2000, d = 8, rng = 1}]',
    ...     'oracles = ["oue"]', 'epsilons = [1.0]', 'methods = ["base", "norm-sub"]', 'repetitions = 2']))
    >>> cfg = experiments.config.load_config(folder / "tiny.toml")
    >>> cfg.kind, cfg.methods, cfg.repetitions
    ('full-domain', ('base', 'norm-sub'), 2)
    """

    name: str
    kind: str
    datasets: tuple
    oracles: tuple[str, ...]
    epsilons: tuple[float, ...]
    methods: tuple[str, ...]
    repetitions: int = 30
    seed: int = 2020
    params: dict = field(default_factory=dict)
    description: str = ""
    source: str = ""  # path of the TOML file, for the record
    #: the files of oracles of one's own (``FILE.py:NAME`` entries of ``oracles``, absolute), which
    #: each task loads before it runs (worker processes do not share this one's registry)
    plugins: tuple[str, ...] = ()
    oracle_params: tuple = ()

    def as_dict(self) -> dict[str, Any]:
        """The config as plain lists and dicts (recorded beside the results).

        Returns
        -------
        dict

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from ldpopt import experiments
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "tiny.toml").write_text("\\n".join([
        ...     'name = "tiny"', 'kind = "full-domain"', 'datasets = [{name = "zipf", n = 2000, d = 8, rng = 1}]',
        ...     'oracles = ["oue"]', 'epsilons = [1.0]', 'methods = ["base", "norm-sub"]', 'repetitions = 2']))
        >>> sorted(experiments.config.load_config(folder / "tiny.toml").as_dict())[:4]
        ['datasets', 'description', 'epsilons', 'kind']
        """
        return {"name": self.name, "kind": self.kind, "datasets": list(self.datasets),
                "oracles": list(self.oracles), "epsilons": list(self.epsilons),
                "methods": list(self.methods), "repetitions": self.repetitions, "seed": self.seed,
                "params": dict(self.params), "description": self.description, "source": self.source,
                "plugins": list(self.plugins), "oracle_params": [dict(p) for p in self.oracle_params]}


def config_paths(pattern: str = "*.toml") -> list[Path]:
    """Every shipped config (``experiments/configs/*.toml``), sorted by name.

    Raises ``ValueError`` when there is none (an installation without its package data), so a caller
    never lists or runs an empty set silently.
    """
    paths = sorted(CONFIG_DIR.glob(pattern))
    if not paths:
        raise ValueError(
            f"no experiment configs ({pattern}) in {CONFIG_DIR}: this installation lacks ldpopt's package "
            "data; reinstall from a complete checkout (pip install .)"
        )
    return paths


def find_config(name_or_path) -> Path:
    """A config path from a ``.toml`` file path, or a NAME looked up as ``experiments/NAME.toml`` in
    the current directory (your own configs), then among the shipped configs (:data:`CONFIG_DIR`)."""
    p = Path(name_or_path)
    if p.suffix == ".toml" and p.is_file():
        return p
    for folder in (Path.cwd() / "experiments", CONFIG_DIR):
        cand = folder / f"{name_or_path}.toml"
        if cand.is_file():
            return cand
    known = sorted(x.stem for x in CONFIG_DIR.glob("*.toml"))
    raise ValueError(f"experiment {name_or_path!r} not found (a .toml path, or one of {known})")


def load_config(name_or_path, quick: bool = False) -> ExperimentConfig:
    """Read and validate a config; with ``quick`` apply its ``[quick]`` overrides.

    Parameters
    ----------
    name_or_path : str or os.PathLike
        A ``.toml`` path, or a NAME looked up as ``experiments/NAME.toml`` in the current directory,
        then among the shipped configs.
    quick : bool, default False
        Apply the ``[quick]`` table.

    Returns
    -------
    ExperimentConfig

    Raises
    ------
    ValueError
        Config not found, a key missing or unknown, a bad repetition count or ε, an unknown kind,
        method or oracle file.

    Examples
    --------
    >>> from ldpopt import experiments
    >>> cfg = experiments.config.load_config("wang_arxiv_fig1_full_domain", quick=True)
    >>> cfg.kind, cfg.oracles, cfg.epsilons
    ('full-domain', ('oue',), (0.4, 1.0, 2.0))
    """
    path = find_config(name_or_path)
    with open(path, "rb") as fh:
        raw = tomllib.load(fh)
    quick_over = raw.pop("quick", {})
    if quick:
        params_over = quick_over.pop("params", {})
        raw.update(quick_over)
        raw["params"] = {**raw.get("params", {}), **params_over}
    missing = [k for k in ("name", "kind", "datasets", "oracles", "epsilons", "methods") if k not in raw]
    if missing:
        raise ValueError(f"experiment config {path} is missing {missing}")
    unknown = set(raw) - {"name", "kind", "datasets", "oracles", "epsilons", "methods", "repetitions",
                          "seed", "params", "description"}
    if unknown:
        raise ValueError(f"experiment config {path} has unknown keys {sorted(unknown)}")
    reps = raw.get("repetitions", 30)
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
        raise ValueError(f"repetitions must be an integer >= 1 in {path}, got {reps!r}")
    seed = raw.get("seed", 2020)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        # a seed of 1.5 would be cut to 1 (and "1" to what?): the runs' streams name it exactly
        raise ValueError(f"seed must be an integer in [0, 2^63) in {path}, got {seed!r}")
    eps = tuple(float(e) for e in raw["epsilons"])
    if not eps or any(not e > 0 for e in eps):
        raise ValueError(f"epsilons must be a non-empty list of numbers > 0 in {path}")
    from .registry import check_methods, get_kind

    get_kind(str(raw["kind"]))  # an unknown kind is refused before any work
    methods = check_methods(raw["methods"], str(raw["kind"]), path)
    oracle_names, plugins = check_oracles(raw["oracles"], path)
    oracle_params = check_oracle_params(raw["oracles"], path, str(raw["kind"]))
    return ExperimentConfig(
        name=str(raw["name"]), kind=str(raw["kind"]),
        datasets=tuple(d if isinstance(d, str) else tuple(sorted(d.items())) for d in raw["datasets"]),
        oracles=oracle_names, epsilons=eps, methods=methods,
        repetitions=reps, seed=seed, params=dict(raw.get("params", {})),
        description=str(raw.get("description", "")), source=str(path), plugins=plugins,
        oracle_params=oracle_params if any(oracle_params) else ())


def check_oracles(entries, path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A config's ``oracles`` before any work: (names, plugin files). A name stays as given (the task
    kind checks it: some kinds' oracles are protocols of their own, e.g. the numeric ``sw``). A
    ``FILE.py:NAME`` entry (relative to the config's folder) is loaded and registered now and stands
    in the table under its registered ``name``; its absolute ``FILE.py:NAME`` is returned among the
    plugins, which every task loads first. Errors are one line naming ``oracles[i]``."""
    from .. import oracles
    from .._userfunc import is_reference

    path = Path(path)
    if not isinstance(entries, (list, tuple)) or not entries:
        raise ValueError(f"experiment config {path}: oracles must be a non-empty list, got {entries!r}")
    names, plugins = [], []
    for i, entry in enumerate(entries):
        where = f"experiment config {path}: oracles[{i}]"
        if isinstance(entry, dict):  # {name = ..., PARAM = VALUE, ...}: the parameters are check_oracle_params's
            entry = entry.get("name")
        if not isinstance(entry, str):
            raise TypeError(f"{where}: an oracle name, FILE.py:NAME or a table {{name = NAME, PARAM = VALUE, ...}}, "
                            f"got {entries[i]!r}")
        if not is_reference(entry):  # a name: the kind's own (numeric protocols, multi's) or registered
            names.append(entry)
            continue
        try:
            cls = oracles.oracle_class(entry, base=path.parent)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        names.append(cls.name)
        given, _, attr = entry.rpartition(":")
        target = Path(given) if Path(given).is_absolute() else (path.parent / given).resolve()
        plugins.append(f"{target}:{attr}" if given.endswith(".py") else entry)
    return tuple(names), tuple(dict.fromkeys(plugins))


def check_oracle_params(entries, path, kind: str) -> tuple[tuple[tuple[str, object], ...], ...]:
    """The constructor parameters of each ``oracles`` entry (after :func:`check_oracles`), as sorted
    ``(name, value)`` items: () for a name, the table's keys but ``name`` for a table such as
    ``{name = "olh", g = 8}``. Refused before any work, one line naming ``oracles[i]``: a key the
    oracle's constructor does not take (listing those it takes), a value that is not a number, text
    or boolean, parameters for an oracle that is not registered (a kind's own protocol), or for a
    kind that does not build its oracle from them (they would be ignored:
    :func:`ldpopt.experiments.registry.takes_oracle_params`). The values themselves are checked by
    the oracle when a task builds it (its own ranges, with its own message)."""
    import inspect

    from .. import oracles
    from .registry import takes_oracle_params

    path = Path(path)
    out: list[tuple[tuple[str, object], ...]] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            out.append(())
            continue
        where = f"experiment config {path}: oracles[{i}]"
        given = {k: v for k, v in entry.items() if k != "name"}
        if not given:
            out.append(())
            continue
        name = entry["name"]
        try:
            cls = oracles.oracle_class(name, base=path.parent)
        except ValueError:
            raise ValueError(f"{where}: parameters {sorted(given)} need a registered oracle; {name!r} is not one "
                             f"(a kind's own protocol takes none)") from None
        if not takes_oracle_params(kind):
            raise ValueError(f"{where}: kind {kind!r} does not build its oracle from a config's parameters; give "
                             f"the oracle as a name")
        takes = [p for p in inspect.signature(cls.__init__).parameters.values()
                 if p.name not in ("self", "epsilon", "d") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        known = {p.name for p in takes}
        for key, value in given.items():
            if key not in known:
                listed = ", ".join(sorted(known)) or "none"
                raise ValueError(f"{where}: oracle {cls.name} takes no parameter {key!r}; its parameters: {listed}")
            if not isinstance(value, (bool, int, float, str)):
                raise TypeError(f"{where}: {key} must be a number, text or a boolean, got {value!r}")
        out.append(tuple(sorted(given.items())))
    return tuple(out)
