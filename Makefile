# The two set-up commands of a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test test-versions bench clean docs

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The CLI checks fixes against pytest tests, so `make run` installs the pytest extra.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[pytest]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(VENV)/.installed $@

# Heal the shipped example offline with the built-in engine and print the diff.
run: $(VENV)/.installed
	$(BIN)/regrow heal examples/prices.py::parse_price --test examples/test_prices.py

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -q
	$(BIN)/ruff check src tests
	$(BIN)/mypy src tests/typing_api.py

# The docs site (mkdocs.yml, pages in docs/) into site/, every warning an error.
docs: $(VENV)/.installed-dev
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# Speed and memory figures, each against a baseline measured in the same run.
# The suite under Python 3.10 and 3.13 as well, where they are installed (CI runs it after `make test`).
test-versions:
	bash scripts/test-versions.sh

bench: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/overhead.py
	$(BIN)/python benchmarks/sandbox.py
	$(BIN)/python benchmarks/engine.py
	$(BIN)/python benchmarks/unittest_direct.py
	$(BIN)/python benchmarks/evidence.py
	$(BIN)/python benchmarks/live.py
	$(BIN)/python benchmarks/live_wait.py
	$(BIN)/python benchmarks/fleet.py
	$(BIN)/regrow bench benchmarks/suites/regrow40/manifest.toml --jobs 2 --out bench-results
	$(BIN)/regrow bench benchmarks/suites/thin/manifest.toml --jobs 2 --out bench-results/thin
	$(BIN)/regrow bench benchmarks/suites/heldout/manifest.toml --jobs 2 --out bench-results/heldout
	$(BIN)/regrow bench benchmarks/suites/heldout2/manifest.toml --jobs 2 --out bench-results/heldout2
	$(MAKE) bench-realcode
	$(MAKE) bench-peers

clean:
	rm -rf $(VENV) .venv-3.* .venv-peers* build dist site

# `make e2e-llm`: an optional end-to-end heal through a real local model (not part of CI).
include mk/e2e-llm.mk

# `make bench-realcode`: the real-code suite (docs/realcode.md). Pinned sdists are fetched once into
# .cache/sdists/ (the only step that needs the network) and checked against their sha256; the bugs
# of benchmarks/suites/realcode/*.toml are injected into task trees under .cache/realcode/.
# REALCODE_MANIFEST=manifest-isolated.toml loads the references under an import root of their own.
REALCODE_MANIFEST ?= manifest.toml
.PHONY: bench-realcode
bench-realcode: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/fetch_sdists.py build
	$(BIN)/regrow bench .cache/realcode/$(REALCODE_MANIFEST) --jobs 2 --out bench-results/realcode
	$(BIN)/python benchmarks/fetch_sdists.py report bench-results/realcode/results.json \
		--manifest .cache/realcode/$(REALCODE_MANIFEST)

# `make bench-llm`: regrow vs self-heal on a real local model, the engine-unfixable tasks (docs/bench-llm.md; not CI).
include mk/bench-llm.mk

# `make bench-peers`: regrow beside its peers in one run (docs/benchmarks.md, "Peers"). Each peer is
# pinned and installed from the package registry into a benchmark venv of its own kind: healing-agent
# and mutmut beside regrow in .venv-peers; self-heal alone in .venv-peers-selfheal (its pytest plugin
# and regrow's both claim `--heal`); CodeSuture beside regrow under Python 3.12+ in .venv-peers-codesuture
# (it needs sys.monitoring). A venv whose install failed is reported as "missing: <reason>", not skipped.
PEERS_PY312 ?= $(firstword $(wildcard /root/.pyenv/versions/3.12.1/bin/python /root/.pyenv/versions/3.13.0/bin/python) python3.12)
.PHONY: bench-peers bench-peers-env
.venv-peers/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv .venv-peers
	.venv-peers/bin/python -m pip install --quiet -e '.[openai]' 'healing-agent==0.5.0' 'mutmut==3.8.1' 'pytest>=7.4' \
		> .venv-peers/install.log 2>&1 || echo "install failed: see .venv-peers/install.log"
	touch $@
.venv-peers-selfheal/.installed: Makefile
	$(PYTHON) -m venv .venv-peers-selfheal
	.venv-peers-selfheal/bin/python -m pip install --quiet 'self-heal-llm[openai]==0.5.0' \
		> .venv-peers-selfheal/install.log 2>&1 || echo "install failed: see .venv-peers-selfheal/install.log"
	touch $@
.venv-peers-codesuture/.installed: pyproject.toml Makefile
	$(PEERS_PY312) -m venv .venv-peers-codesuture || mkdir -p .venv-peers-codesuture
	.venv-peers-codesuture/bin/python -m pip install --quiet -e . 'codesuture==1.1.0' \
		> .venv-peers-codesuture/install.log 2>&1 || echo "install failed: see .venv-peers-codesuture/install.log"
	touch $@
bench-peers-env: .venv-peers/.installed .venv-peers-selfheal/.installed .venv-peers-codesuture/.installed
bench-peers: bench-peers-env $(VENV)/.installed-dev
	$(BIN)/python benchmarks/peers/bench_peers.py --out bench-results --regrow-python .venv-peers/bin/python \
		--selfheal-python .venv-peers-selfheal/bin/python --codesuture-python .venv-peers-codesuture/bin/python
