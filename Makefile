# Cardtable: the two commands a newcomer needs.
#   make demo   set everything up and run the demo (dashboard on http://127.0.0.1:8000/)
#   make test   set everything up and run the whole test suite (what CI runs)
#
# Set-up is idempotent: a second run installs nothing new.

PYTHON ?= python3
VENV   ?= .venv
PIP     = $(VENV)/bin/pip
PY      = $(VENV)/bin/python
# The Pi runs numpy 1.x on Bookworm; CI and development pin the same family
# so the tests exercise what the Pi runs (docs/pi.md, "the numpy trap").
CONSTRAINTS = constraints/dev.txt

.PHONY: demo test setup setup-test apt clean

$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	touch $@

setup: $(VENV)/.created
	$(PIP) install -q -c $(CONSTRAINTS) -e '.[fast]'

# Debian packages the tests need (browser, systemd-analyze, card art, ...).
apt:
	@missing=$$(for p in $$(grep -v '^#' scripts/apt-packages.txt); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	    echo "installing Debian packages: $$missing"; \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

setup-test: apt $(VENV)/.created
	$(PIP) install -q -c $(CONSTRAINTS) -e '.[test]'
	bash scripts/fetch-art.sh

demo: setup
	$(VENV)/bin/cardtable demo

test: setup-test
	$(VENV)/bin/python -m pytest -q

clean:
	rm -rf $(VENV) build *.egg-info
