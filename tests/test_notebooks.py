"""The worked-example notebooks in ``notebooks/``: they run, draw their figures inline, and are
committed executed, with their outputs, so a reader on a code host sees the numbers and plots.

* ``test_notebook_runs`` re-executes each notebook and fails on any error; the notebooks ``assert``
  the numbers they show (solver vs closed form, accuracy gains with confidence intervals, speed
  ratios), so a wrong number fails here, not only a crash. Every plotting cell must produce at least
  one ``image/png`` output (the inline backend; no ``matplotlib.use("Agg")`` in a notebook). It then
  compares the fresh outputs with the committed ones (``drift``), so what a reader sees in the
  committed file is what the code does today.
* ``drift`` compares cell by cell, output by output (consecutive stream chunks joined; a display's
  ``text/markdown`` when it has one, else its ``text/plain``; HTML is not compared, it renders the
  same table as the ``text/plain`` beside it): the text with its numbers taken out must be equal, the
  numbers equal within ``RTOL`` (relative) or ``ATOL`` (absolute), and an image where one was
  committed (its pixels are not compared: fonts and anti-aliasing differ between machines).
  Masked, i.e. taken out of both sides before comparing: timings and memory sizes — a number (or a
  range ``a–b``) followed by a time or memory unit (``0.25 s``, ``7.7 ms``, ``25 s wall``, ``3 min``,
  ``1.2 GiB``) — and dates; every number of a cell tagged ``timing`` (cell metadata
  ``"tags": ["timing"]``: speed ratios, tables of times without units); progress lines on stderr
  (progress bars; a solve's lines once it runs past 2 s, which a loaded machine prints and an idle
  one does not), a stderr output holding nothing else left out. The notebooks are seeded, so any other
  difference is drift: the failure names the notebook, the cell and what differed.
* ``test_committed_notebooks_have_outputs`` checks the committed files: run top to bottom in one
  kernel (execution counts 1, 2, …), every code cell executed, an image per plotting cell, no error,
  no machine path in an output.

Regenerate the committed outputs after editing a notebook with
``python tests/test_notebooks.py --write [NOTEBOOK.ipynb ...]`` (``make notebooks``; same kernel set-up as
the test); it prints the drift it overwrites.

How the kernel is chosen: a temporary kernelspec named ``python3`` whose argv is *this* interpreter
(``sys.executable -m ipykernel_launcher``), given to ``KernelManager`` through a
``KernelSpecManager`` that only looks in that directory, so the kernel runs in the venv that runs
pytest whatever kernelspecs the machine has; the test checks it (``sys.prefix`` printed by a cell the
test appends, not by the notebook). The kernel gets ``MPLBACKEND`` = the inline backend, so figures
are PNG outputs whatever the environment's own ``MPLBACKEND`` (e.g. ``Agg``) says. Working directory:
the notebooks folder. Each cell has a 300 s timeout (a notebook is meant to take < 60 s; the margin
is for a loaded 2-core machine).
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
CELL_TIMEOUT = 300
INLINE = "module://matplotlib_inline.backend_inline"
_PLOTS = re.compile(r"plt\.show\(\)|plt\.subplots\(|\.plot\(|plt\.figure\(")

#: Drift tolerance for a number in an output. The notebooks are seeded: two consecutive re-runs of all
#: seven printed the same numbers. RTOL leaves room for another machine's floating-point summation
#: order; below ATOL are rounding-level residuals (violations, stationarity, duality gaps,
#: |closed form - solver|, 1e-18 .. 1e-12), which depend on that order and mean nothing smaller.
RTOL = 1e-6
ATOL = 1e-10
#: A cell whose every number is a timing or derived from one (speed ratios) carries this tag.
TIMING_TAG = "timing"
_NUM = r"[-+]?(?:\d{1,3}(?:,\d{3})+(?![\d,])|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?"
_NUMBER = re.compile(rf"(?<![\w.]){_NUM}")  # not glued to a name: C0 holds none; top-10 and ε=1 hold 10 and 1
_TIMED = re.compile(rf"(?<![\w.]){_NUM}(?:\s?[–-]\s?{_NUM})?\s?(?:s|ms|µs|min|h|KiB|MiB|GiB|MB|GB)\b")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?")
#: Progress lines on stderr: a progress bar (tqdm's ``42%|``, ``it/s]``) or the lines of a solve that has
#: run past ``ldpopt.problems.progress.PROGRESS_AFTER`` (``ldpopt: ROUTE, 2.1 s, ...``): load decides them.
_PROGRESS = re.compile(r"^(?:.*(?:\d+%\||it/s\]|s/it\]).*|ldpopt: [^,\n]+, \d+(?:\.\d+)? s\b.*)(?:\n|$)", re.MULTILINE)


def _kernel_spec_manager(directory: Path) -> KernelSpecManager:
    spec_dir = directory / "python3"
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ldpopt test venv)",
        "language": "python",
        "env": {"MPLBACKEND": INLINE},
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    return KernelSpecManager(kernel_dirs=[str(directory)], ensure_native_kernel=False)


def execute(path: Path, ksm: KernelSpecManager) -> tuple[nbformat.NotebookNode, str]:
    """Run ``path`` top to bottom; returns (the executed notebook, the kernel's sys.prefix). The
    prefix comes from one extra cell run after the notebook's own and removed again."""
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import sys; print(sys.prefix)"))
    km = KernelManager(kernel_name="python3", kernel_spec_manager=ksm)
    assert km.kernel_spec.argv[0] == sys.executable
    client = NotebookClient(nb, km=km, timeout=CELL_TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    client.execute()  # raises CellExecutionError (with the failing cell and traceback) on any error
    probe = nb.cells.pop()
    prefix = "".join(o.get("text", "") for o in probe.outputs if o.output_type == "stream").strip()
    return nb, prefix


def plotting_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code" and _PLOTS.search(c.source)]


def output_problems(nb, *, committed: bool = False) -> list[str]:
    """Why an executed notebook would not read right on a code host (empty: fine). ``committed``:
    also no machine path in an output (a fresh run may print library warnings with local paths;
    what is committed must not)."""
    bad = []
    code = [c for c in nb.cells if c.cell_type == "code"]
    counts = [c.execution_count for c in code]
    if counts != list(range(1, len(code) + 1)):
        bad.append(f"not run top to bottom in one kernel: execution counts {counts}")
    for i, c in enumerate(code):
        if any(o.output_type == "error" for o in c.outputs):
            bad.append(f"code cell {i} has an error output")
        if "matplotlib.use(" in c.source:
            bad.append(f"code cell {i} forces a matplotlib backend (figures would not show inline)")
        if "LDPOPT_NOTEBOOK_PREFIX" in c.source or "sys.prefix" in c.source:
            bad.append(f"code cell {i} holds test plumbing (sys.prefix)")
        text = json.dumps(c.outputs)
        if committed and any(m in text for m in _machine_paths()):
            bad.append(f"code cell {i}: an output shows a machine path")
    for c in plotting_cells(nb):
        if not any("image/png" in o.get("data", {}) for o in c.outputs):
            bad.append(f"plotting cell without an image/png output: {c.source.splitlines()[0][:60]!r}")
    if not plotting_cells(nb):
        bad.append("no plotting cell")
    return bad


def _outputs(cell) -> list[tuple[str, str, bool]]:
    """A code cell's outputs as (kind, text, has an image): consecutive chunks of one stream joined
    (how a stream is cut into chunks depends on timing), a stderr chunk of progress lines only left
    out, a display's ``text/markdown`` or else its ``text/plain``."""
    out = []
    for o in cell.outputs:
        if o.output_type == "stream" and o.name == "stderr" and not _PROGRESS.sub("", o.text).strip():
            continue  # progress lines only: whether a run prints them depends on the machine's load
        if o.output_type == "stream":
            if out and out[-1][0] == o.name:
                out[-1] = (o.name, out[-1][1] + o.text, False)
            else:
                out.append((o.name, o.text, False))
        elif o.output_type == "error":
            out.append(("error", f"{o.ename}: {o.evalue}", False))
        else:
            data = o.get("data", {})
            out.append(("display", data.get("text/markdown", data.get("text/plain", "")), "image/png" in data))
    return out


def _masked(text: str, kind: str, timing: bool) -> tuple[str, list[float]]:
    """(the text with each number replaced by ``#``, the numbers): timings, sizes and dates are
    replaced by ``<masked>`` first; in a ``timing`` cell every number is masked."""
    if kind == "stderr":
        text = _PROGRESS.sub("", text)
    text = _DATE.sub("<date>", _TIMED.sub("<masked>", text))
    numbers = [float(m.replace(",", "")) for m in _NUMBER.findall(text)]
    skeleton = re.sub(r"[ \t]+", " ", _NUMBER.sub("#", text))  # a table's column widths follow its numbers
    return skeleton, ([] if timing else numbers)


def _line_of_number(text: str, i: int) -> str:
    """The line of ``text`` (already masked) holding its ``i``-th number."""
    for line in text.splitlines():
        k = len(_NUMBER.findall(line))
        if i < k:
            return line.strip()
        i -= k
    return ""


def _first_difference(a: str, b: str) -> str:
    """Where two texts part: a short excerpt of each around the first differing character."""
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"committed {a[max(0, i - 40):i + 40]!r} / now {b[max(0, i - 40):i + 40]!r}"


def drift(committed, fresh) -> list[str]:
    """How the outputs of ``fresh`` (the same notebook re-executed) differ from ``committed`` (empty:
    no drift), one line per difference naming the code cell, its first line and what differed.
    What is compared and what is masked: the module docstring."""
    problems = []
    code_c = [c for c in committed.cells if c.cell_type == "code"]
    code_f = [c for c in fresh.cells if c.cell_type == "code"]
    if [c.source for c in code_c] != [c.source for c in code_f]:
        return ["the code cells differ between the two notebooks (not the same notebook re-run)"]
    for k, (cc, cf) in enumerate(zip(code_c, code_f)):
        where = f"cell In [{k + 1}] ({cc.source.splitlines()[0][:50]!r})" if cc.source else f"cell In [{k + 1}]"
        timing = TIMING_TAG in cc.metadata.get("tags", [])
        oc, of = _outputs(cc), _outputs(cf)
        drawn, committed_figures = sum(o[2] for o in of), sum(o[2] for o in oc)
        if drawn < committed_figures:
            problems.append(f"{where}: {committed_figures} figure(s) committed, the re-run draws {drawn}")
        if [o[0] for o in oc] != [o[0] for o in of]:
            problems.append(f"{where}: outputs {[o[0] for o in oc]} committed, {[o[0] for o in of]} now: "
                            + _first_difference("".join(o[1] for o in oc), "".join(o[1] for o in of)))
            continue
        for j, ((kind, tc, ic), (_, tf, img)) in enumerate(zip(oc, of)):
            if ic and not img:
                problems.append(f"{where}, output {j}: a figure was committed here, the re-run shows none")
            (sc, nc), (sf, nf) = _masked(tc, kind, timing), _masked(tf, kind, timing)
            if sc != sf or len(nc) != len(nf):
                problems.append(f"{where}, output {j}: text differs: {_first_difference(tc, tf)}")
                continue
            for i, (a, b) in enumerate(zip(nc, nf)):
                if abs(a - b) > max(RTOL * max(abs(a), abs(b)), ATOL):
                    line = _line_of_number(_DATE.sub("<date>", _TIMED.sub("<masked>", tc)), i)
                    problems.append(f"{where}, output {j}: {a:g} committed, {b:g} now, in {line[:160]!r}")
    return problems


def _machine_paths() -> list[str]:
    """Paths of this machine an executed output must not show: the checkout, the folder holding it,
    the interpreter's prefix and the home directory."""
    root = Path(__file__).resolve().parents[1]
    return [str(root), str(root.parent) + "/", sys.prefix, str(Path.home()) + "/"]


@pytest.fixture(scope="module")
def kernel_spec_manager(tmp_path_factory):
    return _kernel_spec_manager(tmp_path_factory.mktemp("kernels"))


def test_notebooks_exist():
    assert len(NOTEBOOKS) >= 3, f"expected the worked-example notebooks in {NOTEBOOK_DIR}"
    for path in NOTEBOOKS:
        assert nbformat.read(path, as_version=4).metadata["kernelspec"]["name"] == "python3", path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebooks_have_outputs(path):
    nb = nbformat.read(path, as_version=4)
    problems = output_problems(nb, committed=True)
    assert not problems, f"{path.name} (regenerate: python tests/test_notebooks.py --write): {problems}"


def _toy(mse="7.49e-05", seconds="0.25", gap="1e-17", ratio="10", image=True, chunks=1, word="MSE", stderr=""):
    """A two-cell executed notebook whose outputs are built from the arguments (for ``drift``)."""
    text = f"{word} {mse}, gap {gap}, solved in {seconds} s\n"
    cut = len(text) // 2 if chunks == 2 else len(text)
    streams = [nbformat.v4.new_output("stream", name="stdout", text=t) for t in (text[:cut], text[cut:]) if t]
    streams += [nbformat.v4.new_output("stream", name="stderr", text=stderr)] if stderr else []
    figure = [nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"})]
    first = nbformat.v4.new_code_cell("print(...); plt.show()", execution_count=1,
                                      outputs=streams + (figure if image else []))
    timing = nbformat.v4.new_code_cell("print(ratio)", execution_count=2, metadata={"tags": [TIMING_TAG]},
                                       outputs=[nbformat.v4.new_output("stream", name="stdout", text=f"ratio {ratio}×\n")])
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# toy"), first, timing])


def test_drift_compares_numbers_text_and_figures():
    committed = _toy()
    # masked or within tolerance: a timing with its unit, every number of a timing-tagged cell,
    # a rounding-level residual, a stream cut into other chunks
    assert drift(committed, _toy(seconds="3.5", ratio="12", gap="3e-17", chunks=2)) == []
    assert drift(committed, _toy(mse="7.4900001e-05")) == []  # 1.3e-8 relative
    progress = "ldpopt: structured, 2.0 s, iteration 3, gap 1.2e-05\nldpopt: structured, 4.0 s, status running\n"
    assert drift(committed, _toy(stderr=progress)) == []  # a loaded machine's progress lines
    assert "stderr" in drift(committed, _toy(stderr=progress + "UserWarning: something new\n"))[0]
    moved = drift(committed, _toy(mse="7.50e-05"))
    assert len(moved) == 1 and "In [1]" in moved[0] and "7.49e-05 committed, 7.5e-05 now" in moved[0], moved
    assert "text differs" in drift(committed, _toy(word="MAE"))[0]
    assert "1 figure(s) committed, the re-run draws 0" in drift(committed, _toy(image=False))[0]
    changed_code = _toy()
    changed_code.cells[1].source = "print(other)"
    assert "code cells differ" in drift(committed, changed_code)[0]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, kernel_spec_manager, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")  # as under a headless `make test`: the kernel spec must override it
    start = time.perf_counter()
    nb, prefix = execute(path, kernel_spec_manager)
    elapsed = time.perf_counter() - start
    assert prefix == sys.prefix, (prefix, sys.prefix)  # the kernel ran in this venv
    problems = output_problems(nb)
    assert not problems, problems
    print(f"{path.name}: {elapsed:.1f} s")
    changed = drift(nbformat.read(path, as_version=4), nb)
    assert not changed, (f"{path.name}: the committed outputs are not what the notebook prints today "
                         f"(regenerate: python tests/test_notebooks.py --write {path.name}):\n  " + "\n  ".join(changed))


def write_all(names=()) -> None:
    """Execute every notebook (or those named, e.g. ``05_your_own_variant.ipynb``) and save it with its
    outputs (what a reader on a code host sees); a name may carry its folder (``notebooks/05_….ipynb``)."""
    names = {Path(n).name for n in names}
    paths = [p for p in NOTEBOOKS if not names or p.name in names]
    if names and len(paths) != len(names):
        raise SystemExit(f"no such notebook among {[p.name for p in NOTEBOOKS]}: {sorted(names - {p.name for p in paths})}")
    with tempfile.TemporaryDirectory() as d:
        ksm = _kernel_spec_manager(Path(d))
        for path in paths:
            start = time.perf_counter()
            nb, prefix = execute(path, ksm)
            problems = output_problems(nb, committed=True)
            if problems:
                raise SystemExit(f"{path.name}: {problems}")
            for c in nb.cells:  # per-cell timestamps: noise in every diff
                c.metadata.pop("execution", None)
            for line in drift(nbformat.read(path, as_version=4), nb):
                print(f"{path.name}: drift overwritten: {line}")
            nbformat.write(nb, path)
            print(f"{path.name}: executed in {time.perf_counter() - start:.1f} s and saved with its outputs")


if __name__ == "__main__":
    if sys.argv[1:2] != ["--write"]:
        raise SystemExit("usage: python tests/test_notebooks.py --write [NOTEBOOK.ipynb ...]")
    write_all(sys.argv[2:])

