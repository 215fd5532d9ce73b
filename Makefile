# Everything installs itself: `make test` and `make run` work on a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install test run bench migrate clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

test: install
	$(PY) -m pytest -q

run: install
	$(PY) -m service migrate
	$(PY) -m service serve --host 127.0.0.1 --port 8000

bench: install
	$(PY) -m bench

migrate: install
	$(PY) -m service migrate

clean:
	rm -rf $(VENV) .repute .pytest_cache
