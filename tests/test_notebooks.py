"""Execute every worked-example notebook in ``notebooks/`` and fail on any error.

The notebooks ``assert`` the numbers they show (solver vs closed form, accuracy gains with confidence
intervals, speed ratios), so a wrong number fails here, not only a crash.

How the kernel is chosen: a temporary kernelspec named ``python3`` whose argv is *this* interpreter
(``sys.executable -m ipykernel_launcher``), given to ``KernelManager`` through a
``KernelSpecManager`` that only looks in that directory. So the kernel always runs in the venv that
runs pytest, whatever kernelspecs the machine has installed. The kernel also gets
``LDPOPT_NOTEBOOK_PREFIX = sys.prefix``, which each notebook's first code cell asserts, and
``MPLBACKEND=Agg`` (the notebooks also call ``matplotlib.use("Agg")``), so nothing needs a display.
Working directory: the notebooks folder. Each cell has a 300 s timeout (a whole notebook is meant to
take < 60 s; the margin is for a loaded 2-core machine).
"""

from __future__ import annotations

import json
import sys
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


def test_notebooks_exist_and_are_saved_clean():
    assert len(NOTEBOOKS) >= 3, f"expected the worked-example notebooks in {NOTEBOOK_DIR}"
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        assert nb.metadata["kernelspec"]["name"] == "python3", path.name
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, \
                    f"{path.name}: saved with outputs; clear them before committing"


@pytest.fixture(scope="module")
def kernel_spec_manager(tmp_path_factory):
    spec_dir = tmp_path_factory.mktemp("kernels") / "python3"
    spec_dir.mkdir()
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ldpopt test venv)",
        "language": "python",
        "env": {"LDPOPT_NOTEBOOK_PREFIX": sys.prefix, "MPLBACKEND": "Agg"},
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    return KernelSpecManager(kernel_dirs=[str(spec_dir.parent)], ensure_native_kernel=False)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, kernel_spec_manager):
    nb = nbformat.read(path, as_version=4)
    km = KernelManager(kernel_name="python3", kernel_spec_manager=kernel_spec_manager)
    assert km.kernel_spec.argv[0] == sys.executable
    client = NotebookClient(nb, km=km, timeout=CELL_TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    start = time.perf_counter()
    client.execute()  # raises CellExecutionError (with the failing cell and traceback) on any error
    elapsed = time.perf_counter() - start
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    # the first code cell prints sys.prefix: the kernel ran in this venv
    first = next(c for c in nb.cells if c.cell_type == "code")
    text = "".join(o.get("text", "") for o in first.outputs if o.output_type == "stream")
    assert text.startswith(sys.prefix), text
    print(f"{path.name}: {elapsed:.1f} s")
