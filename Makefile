# One-command entry points. `make demo` is the one the README leads with: on a fresh machine it
# builds the virtualenv, then runs the whole job (local Kafka, the small CPU model, one worker,
# the sample feed) and prints a summary. See herramientas/demo.py.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo venv test lock

demo: venv
	$(PY) -m herramientas.demo $(DEMO_ARGS)

# .venv exactly as uv.lock says (base and every extra, hashes checked), created if missing; a
# .venv that already is the lock is left alone (scripts/venv_ok.py, ~0.1 s). scripts/venv.sh.
venv:
	@VENV=$(VENV) PYTHON=$(PYTHON) bash scripts/venv.sh

# Rewrite uv.lock after a change to pyproject.toml's dependencies, then commit both:
#   make lock                                      # keep every locked version the ranges allow
#   make lock ARGS=--upgrade                       # the newest versions the ranges allow
#   make lock ARGS="--upgrade-package langchain-openai"
lock:
	VENV=$(VENV) PYTHON=$(PYTHON) bash scripts/venv.sh lock $(ARGS)

# The README's test command, and what .ci/run runs: installs what the tests need on a fresh
# machine (Debian packages, .venv with the dev/report/local extras, Kafka jars, PostgreSQL), then
# ruff, mypy and pytest. Extra pytest arguments: make test ARGS="-k kafka".
test:
	bash scripts/test.sh $(ARGS)
