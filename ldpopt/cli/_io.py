"""Files in and out of the ``ldpopt`` command: the ``value,count`` table, atomic writes, metadata.

numpy and pandas (which loads pyarrow with it) are imported by the functions that use them, so that
a command's parser can name :data:`FORMATS` and an argument error loads neither."""

from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .._atomic import temp_beside
from ._args import InputError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["CountsTable", "atomic_write", "format_of", "input_file", "out_files", "output_target", "read_counts",
           "read_counts_table", "text_bytes", "write_table"]

FORMATS = ("csv", "parquet", "json")
_MAX_COUNT = 2.0**53  # counts are float64: above this, whole numbers are no longer all representable
_SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".json": "json"}


@dataclass
class CountsTable:
    """The counts of a ``value,count`` file over the whole domain, and where each came from.

    ``lines[i]`` is the line (CSV; the header is line 1) or 1-based row (Parquet) count ``i`` was read
    from, or -1 for a value the file does not list (``--d``: count 0), so that every later check can
    name the line: :meth:`where`."""

    values: np.ndarray  # object (labels) or int64 (0..d-1 with --d)
    counts: np.ndarray  # float64, length d
    lines: np.ndarray  # int64, length d
    unit: str  # "line" or "row"
    path: Path

    @property
    def d(self) -> int:
        return len(self.counts)

    def where(self, i: int) -> str:
        line = int(self.lines[i])
        if line < 0:
            return f"value {self.values[i]} (absent from {self.path}, count 0)"
        return f"{self.unit} {line} of {self.path}"

    def columns(self) -> dict:
        """``{"value": values, "count": counts}``: a table :func:`write_table` takes as it takes a
        DataFrame, without loading pandas."""
        return {"value": self.values, "count": self.counts}

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.columns())


# A CSV that pandas.read_csv(dtype=str, keep_default_na=False, skipinitialspace=True) and these
# expressions read alike: no quote, carriage return, NUL or byte-order mark anywhere; every line after
# the header is a value without surrounding whitespace, a comma, spaces, and a count of 1 to 15 ASCII
# digits (exact in a float64); no blank line.
_ROW = r"([^\s,](?:[^,\n]*[^\s,])?),[ ]*([0-9]{1,15})\n"
_PLAIN_BODY = re.compile(f"(?:{_ROW})*")
_PLAIN_ROWS = re.compile(_ROW)
_DIGITS = re.compile(r"(?:[0-9]{1,15}\n)*")


def _plain_csv(path: Path, d: int | None, data: bytes) -> CountsTable | None:
    """The table of a CSV in the plain subset above whose every check passes (at least 2 rows, values
    unique; with ``d`` every value an integer in [0, d), unique), read without pandas (which costs
    more than the rest of a small run); None for any other file, which then goes through
    :func:`_read_raw`, so that every error, and every file outside the subset, is read exactly as
    before. The subset is our choice: it is what aggregators write (``value,count`` lines). ``data``:
    the file's bytes (no newline translation hides a "\r")."""
    import numpy as np

    try:
        text = data.decode("utf-8")
    except UnicodeError:
        return None
    header, _, body = text.partition("\n")
    if any(c in text for c in '"\r\x00\ufeff'):
        return None
    if [h.strip().lower() for h in header.split(",")] != ["value", "count"]:
        return None
    body = body if not body or body.endswith("\n") else body + "\n"
    if _PLAIN_BODY.fullmatch(body) is None:
        return None
    rows = _PLAIN_ROWS.findall(body)
    if len(rows) < 2 and d is None:
        return None
    values, count_texts = zip(*rows) if rows else ((), ())
    counts = np.array(count_texts, dtype=np.str_).astype(np.float64)
    lines = np.arange(2, 2 + len(rows), dtype=np.int64)
    if d is None:
        if len(set(values)) != len(values):
            return None
        return CountsTable(np.array(values, dtype=object), counts, lines, "line", path)
    if _DIGITS.fullmatch("".join(v + "\n" for v in values)) is None:
        return None
    index = np.array(values, dtype=np.str_).astype(np.int64)
    if (index >= d).any() or np.unique(index).size != index.size:
        return None
    full = np.zeros(d, dtype=np.float64)
    full[index] = counts
    full_lines = np.full(d, -1, dtype=np.int64)
    full_lines[index] = lines
    return CountsTable(np.arange(d, dtype=np.int64), full, full_lines, "line", path)


def _read_raw(path: Path, arg: str) -> tuple[pd.DataFrame, int, str]:
    import pandas as pd

    if path.suffix.lower() in (".parquet", ".pq"):
        try:
            raw = pd.read_parquet(path)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
            raise InputError(f"{arg}: cannot read Parquet file {path}: {exc}") from None
        count = [c for c in raw.columns if str(c).strip().lower() == "count"]
        if count and raw[count[0]].dtype.kind not in "iuf":  # counts stored as text are a broken writer
            raise InputError(f"{arg}: column 'count' of {path} must be stored as numbers (integers), "
                             f"got {raw[count[0]].dtype}")
        return raw.astype({c: "string" for c in raw.columns}), 1, "row"  # 1-based row numbers
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except pd.errors.ParserError as exc:
        raise InputError(f"{arg}: malformed CSV {path}: {exc}") from None
    except pd.errors.EmptyDataError:
        raise InputError(f"{arg}: {path} is empty (expected a header 'value,count')") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{arg}: {path} is not UTF-8 text: {exc}") from None
    return raw, 2, "line"  # line 1 is the header


def text_bytes(path: Path, arg: str) -> bytes:
    """The bytes of a text input, refusing a NUL byte with the line it is on: no text format ldpopt
    reads holds one, and readers differ on it (pandas cuts the field there, or keeps it), so a file
    with one is a binary or UTF-16 file given by mistake, never data to guess at."""
    data = path.read_bytes()
    at = data.find(b"\x00")
    if at >= 0:
        line = data.count(b"\n", 0, at) + 1
        raise InputError(f"{arg}: line {line} of {path} holds a NUL byte (a binary or UTF-16 file?); give "
                         f"UTF-8 text")
    return data


def input_file(path, arg: str) -> Path:
    """``path`` as a Path if it is a regular file (or a link to one) that can be read; otherwise an
    InputError naming ``arg`` and saying what is there instead (nothing, a folder, a pipe/device)."""
    path = Path(path)
    if path.is_file():
        return path
    if path.is_dir():
        raise InputError(f"{arg}: {path} is a folder, not a file")
    if path.exists():
        raise InputError(f"{arg}: {path} is not a regular file (a named pipe, device or socket)")
    raise InputError(f"{arg}: no such file: {path}")


def read_counts_table(path, d: int | None = None, arg: str = "--counts", step: int = 1,
                      signed: bool = False) -> CountsTable:
    """Read a ``value,count`` table (CSV, or Parquet by suffix ``.parquet``/``.pq``).

    Counts are numbers of reports: whole numbers >= 0 (``12``, ``12.0``, ``1e3``; not ``12.5``), and
    a Parquet file must store them as numbers, not text. Values must be unique. Without ``d`` the
    values are labels and the domain is the rows of the file (at least 2); integer values with gaps
    (``0, 5``) are refused there (:func:`_refuse_gaps`: they are positions, and need ``d``). With ``d`` (aggregators
    that omit values never reported) the values are the integers 0..d-1: a value the file does not
    list has count 0, and a value that is not an integer in [0, d) is an error. Every error names
    ``arg`` (the option the file came from) and the line (the header is line 1) or, for Parquet, the
    1-based row. ``step`` > 1: counts are multiples of 1/step (RAPPOR's support counts, multiples of
    1/h), accepted within 1e-6 of one (a decimal file's rounding) and snapped to it. ``signed``:
    counts are any finite numbers (noisy counts released with central noise, ``--central``).
    """
    path = input_file(path, arg)
    if d is not None:
        from ._limits import refuse_oversized

        refuse_oversized(d * 8 * 4, "--d", f"a table of d = {d} counts")  # counts, lines, values, a temporary
    if path.suffix.lower() not in (".parquet", ".pq") and not signed:
        plain = _plain_csv(path, d, text_bytes(path, arg))
        if plain is not None:
            return _refuse_gaps(plain, arg) if d is None else plain
    import numpy as np
    import pandas as pd

    raw, first, unit = _read_raw(path, arg)
    cols = [str(c).strip().lower() for c in raw.columns]
    if cols != ["value", "count"]:
        raise InputError(f"{arg}: {path} must have exactly the columns value,count; got {list(raw.columns)}")
    raw.columns = ["value", "count"]
    if d is None and len(raw) < 2:
        raise InputError(f"{arg}: {path} must have at least 2 rows (a domain of d >= 2 values; "
                         f"give --d when the file omits values with count 0)")
    lines = np.arange(first, first + len(raw), dtype=np.int64)

    def at(i):
        return f"{unit} {i + first} of {path}"

    values = raw["value"].fillna("").astype(str).str.strip()  # a Parquet null is a missing value, not "<NA>"
    counts = pd.to_numeric(raw["count"].str.strip(), errors="coerce").to_numpy(dtype=np.float64)
    if step != 1:
        with np.errstate(invalid="ignore"):
            snapped = np.rint(counts * step)
        whole = np.abs(counts * step - snapped) <= 1e-6
        counts = np.where(whole, snapped / step, counts)
    if signed:
        bad = ~np.isfinite(counts)
    else:
        bad = ~np.isfinite(counts) | (counts < 0) | (counts * step != np.floor(counts * step))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        what = ("a finite number (a noisy count)" if signed else "a whole number >= 0 (a number of reports)"
                if step == 1 else f"a multiple of 1/{step} >= 0")
        raise InputError(f"{arg}: {at(i)}: count must be {what}, got {raw['count'].iloc[i]!r}")
    huge = np.abs(counts) >= _MAX_COUNT
    if huge.any():
        i = int(np.flatnonzero(huge)[0])
        raise InputError(f"{arg}: {at(i)}: count {raw['count'].iloc[i]!r} is 2^53 reports or more: more than "
                         f"a float64 counts exactly (and than any n ldpopt takes)")
    empty = (values == "").to_numpy()
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise InputError(f"{arg}: {at(i)}: value is empty or missing")
    dup = values.duplicated().to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise InputError(f"{arg}: {at(i)}: value {values.iloc[i]!r} repeats an earlier row")
    if d is None:
        return _refuse_gaps(CountsTable(values.to_numpy(dtype=object), counts, lines, unit, path), arg)
    index = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(index) | (index != np.floor(index)) | (index < 0) | (index >= d)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{arg}: {at(i)}: with --d {d} a value must be an integer in [0, {d}), "
                         f"got {values.iloc[i]!r}")
    index = index.astype(np.int64)
    dup = pd.Series(index).duplicated().to_numpy()  # "3" and "03" are the same value
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise InputError(f"{arg}: {at(i)}: value {values.iloc[i]!r} repeats an earlier row (as {index[i]})")
    full = np.zeros(d, dtype=np.float64)
    full[index] = counts
    full_lines = np.full(d, -1, dtype=np.int64)
    full_lines[index] = lines
    return CountsTable(np.arange(d, dtype=np.int64), full, full_lines, unit, path)


def _refuse_gaps(table: CountsTable, arg: str) -> CountsTable:
    """A labelled table whose every value is a non-negative integer (digits, or digits and a zero
    fraction: ``5.0``, as a float column is written) that does not run
    without a gap from its least to its greatest value is refused: such values are almost always
    positions in a domain whose absent values were never reported (an aggregator that omits zero
    counts), and reading them as labels would shrink the domain silently (``0, 5`` read as a domain of
    2). The message says how to give d. Values that run without a gap (ratings ``1..5``, years) stay
    labels: our choice, since they are a whole domain as written. Vectorised (no loop over values)."""
    import numpy as np

    text = np.asarray(table.values, dtype=str)
    head, dot, tail = (np.char.partition(text, ".")[:, i] for i in range(3))  # "5.0": an integer written as a float
    whole = np.char.isdigit(head) & ((dot == "") | (np.char.strip(tail, "0") == ""))
    if not whole.all() or np.char.str_len(head).max() > 15:  # labels, or beyond a float64's ints
        return table
    ints = head.astype(np.int64)
    lo, hi = int(ints.min()), int(ints.max())
    if np.unique(ints).size != ints.size or hi - lo + 1 == ints.size:  # "3" and "03": labels as written
        return table
    raise InputError(f"{arg}: the values of {table.path} are integers with gaps ({ints.size} values from {lo} to "
                     f"{hi}): they are read as positions only with a domain size; give --d D (values 0..D-1, a value "
                     f"the file omits has count 0), or list every value, with count 0 where none was reported")


def read_counts(path, d: int | None = None) -> pd.DataFrame:
    """:func:`read_counts_table` as a ``value,count`` DataFrame, with the file's record read first (a
    CSV's sidecar ``FILE.meta.json`` or a Parquet file's ``ldpopt`` metadata, as ``ldpopt aggregate``
    writes them): when it states d and that the values are positions, ``d`` left out is taken from
    it, and a ``d`` given otherwise is an InputError naming both values (the counts would be read in
    a domain they were not collected in)."""
    from .._provenance import read_recorded, show

    try:
        rec = read_recorded(path)
    except ValueError as exc:
        raise InputError(f"--counts: {exc}") from None
    if rec is not None and rec.d is not None:
        if d is not None and d != rec.d:
            raise InputError(f"d = {show(d)} contradicts d = {rec.d} recorded in {rec.source} (the counts were "
                             f"collected with it; leave d out or give the recorded value)")
        if d is None and rec.labelled is False:
            d = rec.d
    return read_counts_table(path, d).frame()


def format_of(out, fmt: str | None) -> str:
    """The output format: ``fmt`` if given, else inferred from the suffix of ``out`` (csv without
    ``out``). A known suffix that contradicts ``fmt`` (``--format parquet --out x.csv``) is refused:
    a file whose name lies about its content is worse than an error."""
    suffix = _SUFFIXES.get(Path(out).suffix.lower()) if out else None
    if fmt is None:
        if out is None:
            return "csv"
        if suffix is None:
            raise InputError(f"--out {out}: cannot tell the format from the suffix; name it .csv, .parquet "
                             f"or .json, or give --format")
        return suffix
    if suffix is not None and suffix != fmt:
        raise InputError(f"--format {fmt} does not match --out {out} (a {suffix} name); "
                         f"drop --format or name the file .{fmt}")
    return fmt


def output_target(path, arg: str = "--out") -> Path:
    """The regular file that writing ``path`` replaces (or creates), after checks naming ``arg``.

    A symbolic link is written *through*: the result replaces the file the link points to (followed
    to its end, as ``open(path, "w")`` would) and the link stays a link. What is not a regular file
    (a folder, a named pipe, a device, a socket) is refused, because the atomic write renames a
    finished temporary over the path, and renaming over a device or a pipe would replace it by a plain
    file (its reader would get nothing); we chose refusing over streaming into it so that every
    output ldpopt writes is whole or absent. The folder must exist: a mistyped folder is an error,
    not a new tree of folders."""
    given = Path(path)
    target = Path(os.path.realpath(given)) if given.is_symlink() else given
    via = f" (the link {given} points to {target})" if target != given else ""
    if target.is_dir():
        raise InputError(f"{arg} {given} is a folder, not a file{via}")
    if os.path.lexists(target) and not target.is_file():
        raise InputError(f"{arg} {given} is not a regular file (a named pipe, device or socket){via}; "
                         f"give the name of a file to write")
    folder = target.parent
    if not folder.is_dir():
        what = "is a file, not a folder" if os.path.lexists(folder) else "does not exist"
        raise InputError(f"{arg} {given}: the folder {folder} {what}{via}")
    return target


def atomic_write(writers: list, arg: str = "--out") -> None:
    """Write each ``(path, fn)`` atomically: every path is checked first (:func:`output_target`:
    links written through, only regular files replaced, the folder must exist), then ``fn(tmp)``
    writes a temporary file beside the target and every temporary is renamed over its target, so a
    failure never leaves a partial file. The file gets the mode a plain ``open(path, "w")`` would give
    (0o666 & ~umask for a new file), not ``mkstemp``'s 0600. OS errors become one-line InputErrors
    naming ``arg`` and the path."""
    targets = [(Path(path), output_target(path, arg), fn) for path, fn in writers]
    tmps = []
    try:
        for path, target, fn in targets:
            try:
                tmp = temp_beside(target)
            except OSError as exc:
                raise InputError(f"{arg} {path}: cannot write there: {exc.strerror or exc}") from None
            tmps.append((tmp, path, target))
            fn(tmp)
        for tmp, path, target in tmps:
            output_target(path, arg)  # still a regular file (or absent) after the writing took its time
            try:
                os.replace(tmp, target)
            except OSError as exc:
                raise InputError(f"{arg} {path}: cannot write there: {exc.strerror or exc}") from None
    finally:
        for tmp, _, _ in tmps:
            if tmp.exists():
                tmp.unlink()


def as_json(table) -> dict:
    """A DataFrame or a dict of columns (:meth:`CountsTable.columns`) as ``{"columns", "data"}``."""
    names = list(table.columns) if hasattr(table, "columns") else list(table)
    return {"columns": names, "data": {c: table[c].tolist() for c in names}}


def csv_text(table) -> str:
    """``table`` (a DataFrame or a dict of numpy columns) as CSV text, floats with 17 significant
    digits (they round-trip exactly) and NaN as an empty field.

    A dict whose columns are float, integer or text is written here without pandas, field for field
    what ``DataFrame.to_csv(index=False, float_format="%.17g")`` writes (the same ``csv`` writer,
    minimal quoting, ``"\\n"`` line ends); anything else goes through pandas."""
    import numpy as np

    if isinstance(table, dict):
        cols = []
        for col in map(np.asarray, table.values()):
            if col.dtype.kind == "f":
                text = np.char.mod("%.17g", col).astype(object)
                text[np.isnan(col)] = ""
            elif col.dtype.kind in "iuO":
                text = col.astype(str).astype(object)
                if col.dtype.kind == "O" and not (text == col).all():  # not all text (bytes, numbers)
                    break
            else:
                break
            cols.append(text)
        else:
            buf = io.StringIO()
            writer = csv.writer(buf, lineterminator="\n")
            writer.writerow(list(table))
            writer.writerows(zip(*cols))
            return buf.getvalue()
        import pandas as pd

        table = pd.DataFrame(table)
    return table.to_csv(index=False, float_format="%.17g", lineterminator="\n")


def write_table(table, out, fmt: str, metadata: dict | None = None) -> list[Path]:
    """Write ``table`` (a DataFrame or a dict of columns) to ``out`` atomically (see
    :func:`atomic_write`); returns the files written.

    CSV floats use 17 significant digits (they round-trip exactly). ``metadata`` (oracle, ε, n, d, p,
    q, version, method parameters) goes where each format keeps it: Parquet schema metadata under the
    key ``ldpopt`` (JSON text); a ``"metadata"`` object in JSON; for CSV a sidecar ``<out>.meta.json``.
    We chose the sidecar over ``#`` header lines because a commented CSV breaks every reader that is
    not told about comments (``pandas.read_csv``, spreadsheets, ``csvkit``) while a plain CSV next to
    a JSON file breaks none.
    """
    out = Path(out)
    meta_text = json.dumps(metadata, indent=2, default=_json_default) + "\n" if metadata is not None else None

    def data(tmp):
        if fmt == "csv":
            Path(tmp).write_text(csv_text(table), encoding="utf-8")
        elif fmt == "parquet":
            import pandas as pd
            import pyarrow as pa
            import pyarrow.parquet as pq

            frame = pd.DataFrame(table) if isinstance(table, dict) else table
            t = pa.Table.from_pandas(frame, preserve_index=False)
            if meta_text is not None:
                t = t.replace_schema_metadata({**(t.schema.metadata or {}), b"ldpopt": meta_text.encode()})
            pq.write_table(t, tmp)
        elif fmt == "json":
            doc = as_json(table) if metadata is None else {"metadata": metadata, **as_json(table)}
            Path(tmp).write_text(json.dumps(doc, default=_json_default))
        else:
            raise InputError(f"--format must be one of {FORMATS}, got {fmt!r}")

    writers = [(out, data)]  # the data file first: an error about the path names it, not the sidecar
    if fmt == "csv" and meta_text is not None:
        writers.append((sidecar(out), lambda tmp: Path(tmp).write_text(meta_text)))
    atomic_write(writers)
    return [p for p, _ in writers]


def out_files(out, fmt: str, arg: str = "--out") -> list[tuple[str, Path] | tuple[str, Path, str]]:
    """``(arg, path)`` of each file :func:`write_table` writes for ``out`` in ``fmt`` with metadata (the
    table; for CSV also its sidecar, as ``(arg, path, what)``), for the collision rule
    (:func:`._paths.refuse_collisions`); empty without ``out`` (stdout)."""
    if out is None:
        return []
    return [(arg, Path(out))] + ([(arg, sidecar(out), f"the metadata file of {arg} {out}:")] if fmt == "csv" else [])


def sidecar(out) -> Path:
    """The metadata file of a CSV output: ``post.csv`` → ``post.csv.meta.json``."""
    out = Path(out)
    return out.with_name(out.name + ".meta.json")


def _json_default(x):
    import numpy as np

    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, (tuple, set, np.ndarray)):
        return list(x)
    return str(x)


def write_text(path, text: str, arg: str = "--out") -> None:
    """A text file, atomically and with the mode a plain write gives (:func:`atomic_write`)."""
    atomic_write([(Path(path), lambda tmp: Path(tmp).write_text(text))], arg)
