# Everything installs itself: `make test` and `make run` work on a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run
INSTALL_LOG := $(VENV)/install.log

.PHONY: install browser lint test fuzz mutants run bench migrate clean

# pip's output (build backends' warnings included) goes to a log, shown only when the install fails.
define quiet_install
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "installing $(2) into $(VENV) (log: $(INSTALL_LOG))"
	@{ $(PY) -m pip install -q --upgrade pip && $(PY) -m pip install -q -e '$(1)'; } > $(INSTALL_LOG) 2>&1 \
		|| { cat $(INSTALL_LOG); exit 1; }
endef

# `make run` needs the service only; the tests and the quality gate need the dev extra as well.
$(RUN_STAMP): pyproject.toml
	$(call quiet_install,.,Repute)
	@touch $(RUN_STAMP)

$(STAMP): pyproject.toml
	$(call quiet_install,.[dev],Repute with the dev extra)
	@touch $(STAMP) $(RUN_STAMP)

install: $(STAMP)

# The browser tests (tests/test_ui.py) drive Debian's chromium: installed when missing and we may.
browser:
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 \
		|| echo "chromium could not be installed: the browser tests will be skipped"; \
	fi

# The quality gate: formatting, lint and types. `make test` runs it first, so CI enforces it.
lint: install
	$(VENV)/bin/ruff format --check service tests bench scripts
	$(VENV)/bin/ruff check service tests bench scripts
	$(VENV)/bin/mypy

# The `ci` hypothesis profile (tests/conftest.py): the same examples on every run, so CI never turns red by luck.
test: install browser lint
	REPUTE_HYPOTHESIS_PROFILE=ci $(PY) -m pytest -q

# Fresh random examples, 1,000 per operation and mode of the schema fuzz: run it before each stop, and make each
# finding a FOUND entry of tests/test_api_fuzz.py.
FUZZ_EXAMPLES ?= 1000
fuzz: install
	REPUTE_HYPOTHESIS_PROFILE=fuzz REPUTE_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -p no:cacheprovider \
		tests/test_api_fuzz.py tests/test_api_garbage.py

# Mutation testing (docs/testing.md): each target module broken one small change at a time, in a copy of the
# tree, against the tests that exercise it; prints the changes no test caught. MUTANTS="--only runs" for one.
MUTANTS ?=
mutants: install
	$(PY) scripts/mutants.py $(MUTANTS)

# Serves on REPUTE_HOST:REPUTE_PORT (default 127.0.0.1:8000).
run: $(RUN_STAMP)
	$(PY) -m service migrate
	$(PY) -m service serve

bench: install
	$(PY) -m bench

migrate: install
	$(PY) -m service migrate

clean:
	rm -rf $(VENV) .repute .pytest_cache
