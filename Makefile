# The two commands of the README: `make demo` and `make test`. Both set up .venv first.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=
# xdist workers: the suite runs real ROS nodes, so two per core at most. `loadscope` sends each
# module to one worker, so a module's kitchen (a module-scoped fixture) is started once, not once
# per worker that got one of its tests.
TEST_WORKERS ?= 2

.PHONY: setup demo test clean

setup:
	@tools/setup_venv.sh

demo: setup
	@$(VENV)/bin/cookwala-ros demo --recipe --quiet-nodes

# Each run gets its own ROS_DOMAIN_ID block (xdist workers add their index) so that two runs on
# one machine never hear each other; discovery stays on this host; ROS logs go to a temp dir. A
# test that hangs past its timeout ends its worker with every thread's stack (test/conftest.py),
# printed after the run; a worker that ended is not replaced (a replacement once left the run waiting).
test: setup
	@export COOKWALA_TEST_DOMAIN_BASE=$$(( ($$$$ % 18) * 5 + 1 )) \
	        ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST \
	        ROS_LOG_DIR=$$(mktemp -d -t cookwala-roslog.XXXXXX); \
	  unset ROS_LOCALHOST_ONLY; \
	  echo "[test] ROS_DOMAIN_ID base $$COOKWALA_TEST_DOMAIN_BASE, logs in $$ROS_LOG_DIR"; \
	  $(PY) -m pytest -n $(TEST_WORKERS) --dist loadscope --max-worker-restart=0 $(PYTEST_ARGS); status=$$?; \
	  for hang in "$$ROS_LOG_DIR"/hang-*.txt; do \
	    if [ -s "$$hang" ]; then echo "[test] a test hung ($$hang):"; cat "$$hang"; fi; \
	  done; exit $$status

clean:
	rm -rf build install log .pytest_cache
