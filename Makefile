# The two commands of the README.  Both set the machine up first (idempotent).
#   make demo   compile the bundled default model and run it on an emulated board
#   make test   the whole test suite, slow tests (QEMU, whole models, fuzzing) included;
#               its set-up adds PyTorch for the PyTorch route's tests (AOT_TORCH=0: not)
# Plain `.venv/bin/pytest` runs the fast subset while developing.

PY := .venv/bin/python

.PHONY: setup demo test test-fast clean

setup:
	@./scripts/setup.sh

demo: setup
	@./scripts/demo.sh

# Only the whole suite installs PyTorch (several GB): the demo and the fast subset need none.
AOT_TORCH ?= 1
test:
	@AOT_TORCH=$(AOT_TORCH) ./scripts/setup.sh
	$(PY) -m pytest -m "slow or not slow" -n auto

test-fast: setup
	$(PY) -m pytest -n auto

clean:
	rm -rf .venv build *.egg-info .pytest_cache
