"""The worked-example notebooks in ``notebooks/``: they run, draw their figures inline, and are
committed executed, with their outputs, so a reader on a code host sees the numbers and plots.

* ``test_notebook_runs`` re-executes each notebook and fails on any error; the notebooks ``assert``
  the numbers they show (solver vs closed form, accuracy gains with confidence intervals, speed
  ratios), so a wrong number fails here, not only a crash. Every plotting cell must produce at least
  one ``image/png`` output (the inline backend; no ``matplotlib.use("Agg")`` in a notebook).
* ``test_committed_notebooks_have_outputs`` checks the committed files: run top to bottom in one
  kernel (execution counts 1, 2, …), every code cell executed, an image per plotting cell, no error,
  no machine path in an output.

Regenerate the committed outputs after editing a notebook with
``python tests/test_notebooks.py --write [NOTEBOOK.ipynb ...]`` (same kernel set-up as the test).

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


def write_all(names=()) -> None:
    """Execute every notebook (or those named, e.g. ``05_your_own_variant.ipynb``) and save it with its
    outputs (what a reader on a code host sees)."""
    paths = [p for p in NOTEBOOKS if not names or p.name in names]
    if names and len(paths) != len(set(names)):
        raise SystemExit(f"no such notebook among {[p.name for p in NOTEBOOKS]}: {sorted(set(names) - {p.name for p in paths})}")
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
            nbformat.write(nb, path)
            print(f"{path.name}: executed in {time.perf_counter() - start:.1f} s and saved with its outputs")


if __name__ == "__main__":
    if sys.argv[1:2] != ["--write"]:
        raise SystemExit("usage: python tests/test_notebooks.py --write [NOTEBOOK.ipynb ...]")
    write_all(sys.argv[2:])

