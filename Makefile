# Two entry points for a fresh machine: `make demo` and `make test`.
# Each creates .venv and installs pgopt with what it needs on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint typecheck unit integration browser clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/pgopt lab run all --quick

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy
	$(BIN)/lint-imports

unit: $(STAMP)
	$(BIN)/pytest -q tests/unit

integration: $(STAMP) browser
	$(BIN)/pytest -q tests/integration

# Chromium renders report.html in one integration test; install it when absent
# (the test skips with a reason when it cannot be installed).
browser:
	@command -v chromium >/dev/null 2>&1 || ( [ "$$(id -u)" = 0 ] && \
	  (apt-get update -qq >/dev/null 2>&1; apt-get install -y -qq chromium >/dev/null 2>&1) ) || \
	  echo "chromium not installed: the browser test will skip"

test: lint typecheck $(STAMP) browser
	$(BIN)/pytest -q

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
