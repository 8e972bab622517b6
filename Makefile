# Two commands do everything on a fresh machine: `make run` and `make test`. The install step also
# compiles ldpopt's Numba kernels into Numba's cache (ldpopt.kernels.precompile, ~40 s of CPU once), as
# pip compiles bytecode: without it each suite process that reached a kernel first compiled it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test test-slow lint docs sweep notebooks bench bench-peers bench-quick bench-table clean

$(STAMP): requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip==25.3"
	$(PY) -m pip install --quiet -r requirements.lock
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -c "import ldpopt.kernels; ldpopt.kernels.precompile()"
	touch $(STAMP)

run: $(STAMP)
	$(PY) -m ldpopt.report

# The suite starts many Python processes (the command line's tests, the docs' blocks, the notebooks'
# kernels, the solver worker) and each imports ldpopt from this checkout: its bytecode is cached
# (__pycache__, ignored by git) even where the environment sets PYTHONDONTWRITEBYTECODE, which made each
# of them compile ldpopt again (measured in a checkout: 12 min 1 s and 18.9 CPU-minutes with it set,
# 10 min 52 s and 16.9 without).
test: $(STAMP)
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest

# The nightly run: the same properties on five times the generated inputs (tests/conftest.py, profile
# ``slow``: every ``examples(N)`` becomes 5·N).
test-slow: $(STAMP)
	env -u PYTHONDONTWRITEBYTECODE LDPOPT_SLOW=1 $(PY) -m pytest

# The linter and the type checker, as configured in pyproject.toml ([tool.ruff], [tool.mypy]);
# .ci/run and the pre-commit hook run the same.
lint: $(STAMP)
	$(VENV)/bin/ruff check ldpopt
	$(VENV)/bin/mypy

# The documentation site (docs/conf.py; the guide, the notebooks with their committed outputs, the API
# reference generated from the docstrings) into docs/_build/html, warnings as errors;
# tests/test_docs_site.py builds the same into a temporary folder and opens it in headless Chromium.
docs: $(STAMP)
	$(PY) -m sphinx -W --keep-going -b html docs docs/_build/html

# Re-execute the notebooks and save them with their outputs (figures inline, numbers from the run),
# as committed for readers on a code host; `make test` re-runs them and fails when an output drifts.
notebooks: $(STAMP)
	$(PY) tests/test_notebooks.py --write

# The full reproduction: every experiment config at 30 repetitions (resumable), then every figure.
sweep: $(STAMP)
	$(VENV)/bin/ldpopt experiment run all --jobs 2
	$(VENV)/bin/ldpopt experiment plot all

# Every bench (benchmarks/run.py --list): ldpopt against the peer libraries (pinned in
# benchmarks/peer-requirements.lock, own venv), the solvers and its previous versions; ~1.5 h.
# bench-quick is the smoke check (every bench at tiny sizes, no peers); bench-table rewrites
# BENCHMARKS.md from benchmarks/results/.
PEER_STAMP := benchmarks/.peer-venv/.installed

bench: $(STAMP) $(PEER_STAMP)
	$(PY) benchmarks/run.py

bench-peers: $(PEER_STAMP)

$(PEER_STAMP): benchmarks/peer-requirements.lock benchmarks/setup_peers.sh
	bash benchmarks/setup_peers.sh
	touch $(PEER_STAMP)

bench-quick: $(STAMP)
	$(PY) benchmarks/run.py --quick

bench-table: $(STAMP)
	$(PY) benchmarks/run.py --table

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
