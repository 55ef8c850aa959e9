# `make demo` and `make test` are the two set-up commands of the README: each creates
# .venv when it is missing, installs the package (editable, with the dev extras) and runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs

.PHONY: demo test typecheck layers docs bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

$(DOCS_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	touch $(DOCS_STAMP)

demo: $(STAMP)
	$(BIN)/roofline-decode demo --out demo-output

test: $(STAMP)
	$(BIN)/python -m pytest -q

# mypy --strict over src/ (configuration in pyproject.toml [tool.mypy]); run by CI
typecheck: $(STAMP)
	$(BIN)/python -m mypy

# the import-linter contracts of pyproject.toml (layers, no circles, private parts); run by CI
layers: $(STAMP)
	$(BIN)/lint-imports --no-cache

# the docs site into site/; --strict (also set in mkdocs.yml): a broken link or reference fails.
# No --quiet: mkdocs 1.6 then drops the warnings before --strict counts them, and passes anyway.
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict

bench: $(STAMP)
	for script in benchmarks/*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) demo-output build dist site
