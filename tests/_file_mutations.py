"""Seeded mutations of the ``ldpopt`` command's input files (for tests/test_cli_fuzz.py).

Each generator takes a ``numpy.random.Generator`` and returns ``(name, content, what, d)``: the file
name (its suffix picks the reader), its bytes, a short description of the mutation for a failure
message, and the ``--d`` to pass (None: the values are labels). The base files are valid; a case
applies zero to three mutations, so that most cases are broken in one place (the reader must name
it) and some stay valid (the command must get them right).
"""

from __future__ import annotations

import decimal
import io
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

N = 1000  # users behind every counts file (OUE at ε = 1: a count is at most N)
D_PROBLEM = 6  # the domain of the solve cases: labels v0..v5

COUNT_TOKENS = ["12.5", "-1", "nan", "inf", "-inf", "1e400", "0x10", "", " 7 ", "1_000", "7.0", "1e2", "+3",
                "-0", "\u0661\u0662", "1,5", '"4"', "4e-1", "99999999999999999999", "NaN", "None", "true",
                "2001", "1e3", "0", "3 4"]
VALUE_TOKENS = ["", " ", '"a,b"', "v1", "\u00e9", "\t", "0", "=cmd", 'a"b', "v1 ", "NaN", "null", "-1", "2.5"]
CHARS = [",", '"', "\n", "\r", "\x00", "\ufeff", ";", " ", "#", "\u00e9", "\t", "'", "\\", "0", "."]
HEADERS = ["Value,Count", "count,value", "value,count,extra", "value", "", "value;count", "VALUE , COUNT",
           "value,value", "\ufeffvalue,count"]
SCALARS = [0, -1, 1.5, 1e400, "nan", "x", True, None, [], {}, [1, 2], "v0", 10**30, -0.0, "inf", 0.5]


def _counts(rng, d):
    return rng.binomial(N, rng.uniform(0.2, 0.4), size=d)


# -- CSV -----------------------------------------------------------------------------------------------
def csv_case(rng):
    """A value,count CSV (labels, or integers with ``--d``) with 0–3 text mutations."""
    d = int(rng.integers(2, 10))
    with_d = bool(rng.random() < 0.25)
    values = [str(i) for i in rng.permutation(d + 2)[:d]] if with_d else [f"v{i}" for i in range(d)]
    rows = [[v, str(c)] for v, c in zip(values, _counts(rng, d))]
    lines = ["value,count"] + [",".join(r) for r in rows]
    what = []
    for _ in range(int(rng.integers(0, 4))):
        kind = int(rng.integers(0, 9))
        i = int(rng.integers(1, len(lines))) if len(lines) > 1 else 0
        if kind == 0 and len(lines) > 1:
            tok = str(rng.choice(COUNT_TOKENS))
            lines[i] = lines[i].rsplit(",", 1)[0] + "," + tok
            what.append(f"count of line {i + 1} = {tok!r}")
        elif kind == 1 and len(lines) > 1:
            tok = str(rng.choice(VALUE_TOKENS))
            lines[i] = tok + "," + lines[i].split(",", 1)[-1]
            what.append(f"value of line {i + 1} = {tok!r}")
        elif kind == 2:
            text = "\n".join(lines)
            j = int(rng.integers(0, max(1, len(text))))
            lines = (text[:j] + text[j + 1:]).split("\n")
            what.append(f"char {j} deleted")
        elif kind == 3:
            text = "\n".join(lines)
            j, ch = int(rng.integers(0, len(text) + 1)), str(rng.choice(CHARS))
            lines = (text[:j] + ch + text[j:]).split("\n")
            what.append(f"{ch!r} inserted at {j}")
        elif kind == 4 and len(lines) > 1:
            op = int(rng.integers(0, 3))
            if op == 0:
                lines.insert(i, lines[i])
            elif op == 1:
                del lines[i]
            else:
                j = int(rng.integers(0, len(lines)))
                lines[i], lines[j] = lines[j], lines[i]
            what.append(["duplicated", "deleted", "swapped"][op] + f" line {i + 1}")
        elif kind == 5:
            lines[0] = str(rng.choice(HEADERS))
            what.append(f"header {lines[0]!r}")
        elif kind == 6:
            j = int(rng.integers(0, sum(map(len, lines)) + 1))
            lines = "\n".join(lines)[:j].split("\n")
            what.append(f"truncated at {j}")
        elif kind == 7:
            lines.append(str(rng.choice(["", ",", "x", "x,1,2", "\x00", "# comment"])))
            what.append(f"line appended {lines[-1]!r}")
    text = "\n".join(lines) + ("\n" if rng.random() < 0.8 else "")
    enc = str(rng.choice(["utf-8"] * 8 + ["latin-1", "utf-16", "utf-8-sig"]))
    data = text.encode(enc, errors="replace")
    if enc != "utf-8":
        what.append(f"encoded {enc}")
    return "c.csv", data, "; ".join(([f"--d {d + 2}"] if with_d else []) + what), (d + 2 if with_d else None)


# -- Parquet -------------------------------------------------------------------------------------------
def _column(rng, kind, counts):
    d = len(counts)
    return {
        "int64": pa.array(counts, pa.int64()), "int32": pa.array(counts, pa.int32()),
        "uint8": pa.array(np.minimum(counts, 255), pa.uint8()),
        "float": pa.array(counts.astype(float), pa.float64()),
        "fraction": pa.array(counts + 0.5, pa.float64()),
        "nan": pa.array(np.where(np.arange(d) == d - 1, np.nan, counts), pa.float64()),
        "string": pa.array([str(c) for c in counts], pa.string()),
        "bool": pa.array(counts % 2 == 0, pa.bool_()),
        "null": pa.array([None if i == 0 else int(c) for i, c in enumerate(counts)], pa.int64()),
        "negative": pa.array(-counts, pa.int64()),
        "huge": pa.array(counts * 10**6, pa.int64()),
        "decimal": pa.array([decimal.Decimal(int(c)) for c in counts], pa.decimal128(12, 0)),
    }[kind]


def parquet_case(rng):
    """A value,count Parquet table with a mutated schema or content, or mutated file bytes."""
    d = int(rng.integers(2, 10))
    counts = _counts(rng, d)
    ckind = str(rng.choice(["int64"] * 6 + ["int32", "uint8", "float", "fraction", "nan", "string", "bool", "null",
                                              "negative", "huge", "decimal"]))
    vkind = str(rng.choice(["str"] * 6 + ["int", "bytes", "null", "dup", "empty", "float", "dict"]))
    values = {"str": pa.array([f"v{i}" for i in range(d)]), "int": pa.array(np.arange(d), pa.int64()),
              "bytes": pa.array([f"v{i}".encode() for i in range(d)], pa.binary()),
              "null": pa.array([None] + [f"v{i}" for i in range(1, d)]),
              "dup": pa.array(["v0"] * d), "empty": pa.array([""] + [f"v{i}" for i in range(1, d)]),
              "float": pa.array(np.arange(d) + 0.25),
              "dict": pa.array([f"v{i}" for i in range(d)]).dictionary_encode()}[vkind]
    cols = {"value": values, "count": _column(rng, ckind, counts)}
    shape = str(rng.choice(["ok"] * 6 + ["swapped", "extra", "missing", "renamed", "empty", "one row"]))
    if shape == "swapped":
        cols = {"count": cols["count"], "value": cols["value"]}
    elif shape == "extra":
        cols["extra"] = pa.array(np.zeros(d))
    elif shape == "missing":
        del cols["count"]
    elif shape == "renamed":
        cols = {"value": cols["value"], "counts": cols["count"]}
    table = pa.table(cols)
    if shape == "empty":
        table = table.slice(0, 0)
    elif shape == "one row":
        table = table.slice(0, 1)
    buf = io.BytesIO()
    pq.write_table(table, buf)
    data = buf.getvalue()
    what = f"count {ckind}, value {vkind}, {shape}"
    damage = int(rng.integers(0, 6))
    if damage == 0:
        j = int(rng.integers(0, len(data)))
        data = data[:j]
        what += f", truncated at {j}"
    elif damage == 1:
        j = int(rng.integers(0, len(data)))
        data = data[:j] + bytes([data[j] ^ int(rng.integers(1, 256))]) + data[j + 1:]
        what += f", byte {j} flipped"
    elif damage == 2 and rng.random() < 0.3:
        data = b"value,count\na,1\nb,2\n"
        what += ", CSV text under a .parquet name"
    return "c.parquet", data, what, None


# -- problem files (TOML and JSON) ----------------------------------------------------------------------
BASE_PROBLEM = {
    "objective": "cls",
    "constraints": [
        {"type": "simplex"},
        {"type": "subset_sum", "labels": ["v0", "v1"], "value": 0.3, "sense": "<="},
        {"type": "box", "lower": 0, "upper": 0.6},
        {"type": "monotone", "direction": "nonincreasing", "labels": ["v0", "v2", "v4"]},
    ],
}


def _mutate_problem(rng, doc):
    """Replace, delete or add one key anywhere in the problem document."""
    doc = json.loads(json.dumps(doc))
    entries = [c for c in doc.get("constraints", []) if isinstance(c, dict)] \
        if isinstance(doc.get("constraints"), list) else []
    where = doc if rng.random() < 0.25 or not entries else entries[int(rng.integers(0, len(entries)))]
    keys = list(where) or ["type"]
    if rng.random() < 0.2:  # mostly a wrong value for a key the entry has; sometimes a key it does not know
        keys = ["unknown", "labels", "positions", "indices", "total", "frequency", "label_pairs", "label_groups", "totals"]
    key = str(rng.choice(keys))
    op = int(rng.integers(0, 3))
    if op == 0 and key in where:
        del where[key]
        return doc, f"deleted {key!r}"
    value = SCALARS[int(rng.integers(0, len(SCALARS)))]
    where[key] = value
    return doc, f"{key!r} = {value!r}"


def _toml(doc) -> str:
    def val(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return json.dumps(v, ensure_ascii=False)
        if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
            return "nan" if v != v else ("inf" if v > 0 else "-inf")
        if isinstance(v, list):
            return "[" + ", ".join(val(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{json.dumps(k)} = {val(x)}" for k, x in v.items()) + " }"
        if v is None:
            return '""'  # TOML has no null
        return repr(v)

    lines = [f"{k} = {val(v)}" for k, v in doc.items() if k != "constraints"]
    for c in doc.get("constraints", []) if isinstance(doc.get("constraints"), list) else []:
        lines += ["", "[[constraints]]"] + [f"{k} = {val(v)}" for k, v in (c.items() if isinstance(c, dict) else [])]
    if "constraints" in doc and not isinstance(doc["constraints"], list):
        lines.insert(0, f"constraints = {val(doc['constraints'])}")
    return "\n".join(lines) + "\n"


def _text_damage(rng, text: str) -> tuple[str, str]:
    kind = int(rng.integers(0, 4))
    j = int(rng.integers(0, len(text) + 1))
    if kind == 0:
        return text[:j] + text[j + 1:], f"char {j} deleted"
    if kind == 1:
        ch = str(rng.choice(CHARS + ["[", "]", "{", "}", "="]))
        return text[:j] + ch + text[j:], f"{ch!r} inserted at {j}"
    if kind == 2:
        return text[:j], f"truncated at {j}"
    return text, "text intact"


def problem_case(rng, suffix: str):
    """The base problem with 0–2 key mutations, then (half the time) one text mutation."""
    doc, what = BASE_PROBLEM, []
    for _ in range(int(rng.integers(0, 3))):
        doc, w = _mutate_problem(rng, doc)
        what.append(w)
    text = _toml(doc) if suffix == "toml" else json.dumps(doc)
    if rng.random() < 0.5:
        text, w = _text_damage(rng, text)
        what.append(w)
    return f"p.{suffix}", text.encode("utf-8", errors="surrogatepass"), "; ".join(what) or "valid", None


def counts_file_for_problems(rng) -> str:
    counts = np.sort(_counts(rng, D_PROBLEM))[::-1]
    return "value,count\n" + "".join(f"v{i},{c}\n" for i, c in enumerate(counts))
