"""The subcommands of ``ldpopt``: name -> (module under :mod:`ldpopt.cli`, one-line help).

Read by :func:`ldpopt.cli.build_parser` (which imports a subcommand's module only when that command
runs, so ``ldpopt --help`` and a usage error import neither numpy nor pandas) and by each module's
``add_parser`` for its own help line. Standard library only."""

COMMANDS = {
    "postprocess": ("postprocess", "post-process aggregated support counts from a file"),
    "solve": ("solve", "solve a post-processing problem (objective + constraints from a file)"),
    "experiment": ("experiment", "run the papers' experiments (TOML configs, see 'experiment list')"),
    "verify": ("verify", ("check the papers' claims: closed forms vs a KKT certificate (any d) and a solver "
                          "(small d), Monte-Carlo lemmas")),
    "choose": ("choose", "rank post-processing methods for a query (simulate from a fitted truth)"),
    "plan": ("plan", "plan a collection: expected error per oracle, method and query from a prior; n for a target"),
    "perturb": ("perturb", "randomise a population with an oracle and write Parquet report shards"),
    "aggregate": ("aggregate", "aggregate a folder of Parquet report shards (out of core, Dask)"),
    "multi": ("multi", "collect marginals of many attributes, make them consistent, reconstruct others"),
    "example": ("example", "write the README's example files (counts, a problem file) to a folder"),
    "heavy-hitters": ("heavy_hitters", "find the frequent strings with PEM, TreeHist or SFP (simulated LDP)"),
}


def help_of(name: str) -> str:
    """The one-line help of subcommand ``name``."""
    return COMMANDS[name][1]
