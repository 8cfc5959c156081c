# make test   -- install what the tests need, then run them
# make bench  -- install what the benchmarks need, run the workload suite, rewrite README's table
# make bench-quick -- small sizes, peers only on the core set and sum_all (a smoke test)
PYTHON ?= python3
PIP = $(PYTHON) -m pip install --quiet --disable-pip-version-check
export CPPCODEGEN_CACHE_DIR ?= $(CURDIR)/.cache/kernels

.PHONY: install install-test install-bench test bench bench-quick

install:
	$(PIP) -e .

install-test:
	$(PIP) -e '.[test,dask]'

install-bench:
	$(PIP) -e '.[bench]' || $(PIP) -e .

test: install-test
	$(PYTHON) -m pytest -q -n 2 tests

bench: install-bench
	$(PYTHON) -m benchmarks.run --readme

bench-quick: install
	$(PYTHON) -m benchmarks.run --quick

# make fuzz [N=2000] [S=0]  -- N random graphs of seed S against NumPy (tests/fuzz/)
N ?= 2000
S ?= 0
.PHONY: fuzz
fuzz: install-test
	$(PYTHON) -m tests.fuzz --count $(N) --seed $(S)
