# One-command entry points. `make demo` is the one the README leads with: on a fresh machine it
# builds the virtualenv, then runs the whole job (local Kafka, the small CPU model, one worker,
# the sample feed) and prints a summary. See herramientas/demo.py.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= local,report

.PHONY: demo venv test

demo: venv
	$(PY) -m herramientas.demo $(DEMO_ARGS)

# Create the virtualenv if missing; install the project only when scripts/venv_ok.py says this
# checkout at this version, with these extras, is not installed yet (a re-run costs ~0.1 s).
venv: $(PY)
	@$(PY) scripts/venv_ok.py $(EXTRAS) || $(PY) -m pip install -e '.[$(EXTRAS)]'

$(PY):
	$(PYTHON) -m venv $(VENV)

# The README's test command, and what .ci/run runs: installs what the tests need on a fresh
# machine (Debian packages, .venv with the dev/report/local extras, Kafka jars, PostgreSQL), then
# ruff, mypy and pytest. Extra pytest arguments: make test ARGS="-k kafka".
test:
	bash scripts/test.sh $(ARGS)
