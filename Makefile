# Set-up and the two commands the README promises: `make run` and `make test`.
# Each creates .venv when missing and installs the project with its test extras.
PYTHON ?= python3
# pytest workers for `make test` (pytest-xdist); `make test TEST_JOBS=0` runs in one process.  Tests marked
# `xdist_group` run in one worker (--dist loadgroup): the snapshots of one terminal size share one app.
TEST_JOBS ?= auto
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test typecheck pytest lint bench screenshots clean system-deps

# The venv gets no pip of its own: seeding one (ensurepip) is 6 s of CPU on every clean install, and the
# interpreter's pip installs into the venv with --python (pip >= 22.3).  Where that pip is missing or older,
# the venv is seeded after all.  (`.venv/bin/python -m ensurepip` adds pip to the venv if you want one.)
$(BIN)/python:
	$(PYTHON) -m venv --without-pip $(VENV)

# pip installs the editable project (PEP 660); --no-compile skips byte-compiling every installed module up
# front (13 s of a clean install): the modules used are compiled on first import.
$(STAMP): pyproject.toml | $(BIN)/python
	$(PYTHON) -m pip --python $(BIN)/python install -q --no-compile -e '.[test]' || \
	  { $(BIN)/python -m ensurepip >/dev/null && $(BIN)/python -m pip install -q --no-compile -e '.[test]'; }
	touch $(STAMP)

# tmux drives the end-to-end test; git is used by discovery. Installed when missing.
system-deps:
	@command -v tmux >/dev/null 2>&1 && command -v git >/dev/null 2>&1 || \
	  { (apt-get update -qq && apt-get install -y -qq tmux git) >/dev/null 2>&1 || \
	    echo "warning: could not install tmux/git; the tmux end-to-end test will be skipped"; }

run: $(STAMP)
	$(BIN)/apxtui --demo

# mypy runs beside pytest (make -j2): the Pilot tests spend much of their time waiting for the app to go
# idle, and mypy fills it.  Bytecode is written even under PYTHONDONTWRITEBYTECODE, so each pytest worker
# and each CLI subprocess of the tests reuses the compiled modules instead of compiling them again.
test: $(STAMP) system-deps
	$(BIN)/ruff check apxtui tests benchmarks scripts
	@$(MAKE) --no-print-directory -j2 typecheck pytest

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP) system-deps
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -n $(TEST_JOBS) --dist loadgroup

lint: $(STAMP)
	$(BIN)/ruff check apxtui tests benchmarks scripts
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python benchmarks/index_speed.py

screenshots: $(STAMP)
	$(BIN)/python scripts/make_screenshots.py

clean:
	rm -rf $(VENV) .pytest_cache
