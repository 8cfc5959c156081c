# make test   -- install what the tests need, then run them
# make bench  -- install what the benchmarks need, run the workload suite, rewrite README's table
# make bench-quick -- small sizes, each suite's quick workloads, peers only on those and the core set (a smoke test)
# make bench-loops -- only the loop workloads (tag loop), rewrite README's loop section
PYTHON ?= python3
PIP = $(PYTHON) -m pip install --quiet --disable-pip-version-check
export CPPCODEGEN_CACHE_DIR ?= $(CURDIR)/.cache/kernels

.PHONY: install install-test install-bench test bench bench-quick bench-loops bench-avx2

install:
	$(PIP) -e .

install-test:
	$(PIP) -e '.[test,dask]'

install-bench:    # the peers too (torch: only the CPU build of 2.13.0, never a requirement)
	$(PIP) -e '.[bench,peers]' || $(PIP) -e '.[bench]' || $(PIP) -e .
	-$(PIP) torch==2.13.0

test: install-test
	$(PYTHON) -m pytest -q -n 2 tests

bench: install-bench
	$(PYTHON) -m benchmarks.run --readme

bench-quick: install
	$(PYTHON) -m benchmarks.run --quick

bench-loops: install-bench
	$(PYTHON) -m benchmarks.run --tag loop --no-dask --readme

# make bench-avx2 -- every workload with AVX2 kernels (on an AVX-512 machine: README's bench-avx2 section)
bench-avx2: install-bench
	CPPCODEGEN_ISA=avx2 $(PYTHON) -m benchmarks.run --no-dask --readme --json bench-results/avx2/results.json

# make fuzz [N=2000] [S=0]  -- N random graphs of seed S against NumPy (tests/fuzz/)
N ?= 2000
S ?= 0
.PHONY: fuzz
fuzz: install-test
	$(PYTHON) -m tests.fuzz --count $(N) --seed $(S)

# make sanitize [SANITIZE=address,undefined] [SN=1000] [SS=1]
#   the whole test suite, then SN fuzz graphs of seed SS, with every kernel built with
#   -fsanitize=$(SANITIZE) -fno-sanitize-recover=all (CPPCODEGEN_SANITIZE). Python itself is
#   not instrumented, so gcc's AddressSanitizer runtime is preloaded into it, with libstdc++
#   (ASan resolves __cxa_throw at start-up: C++ extension modules loaded later would abort on
#   their first exception); leaks are not checked (CPython keeps memory until exit on
#   purpose). Kernels go to their own cache.
SANITIZE ?= address,undefined
SN ?= 1000
SS ?= 1
SANITIZE_ENV = CPPCODEGEN_SANITIZE=$(SANITIZE) \
	CPPCODEGEN_CACHE_DIR=$(CURDIR)/.cache/kernels-sanitize \
	LD_PRELOAD="$$($(CXX_FOR_SANITIZE) -print-file-name=libasan.so) $$($(CXX_FOR_SANITIZE) -print-file-name=libstdc++.so)" \
	ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:abort_on_error=1:detect_odr_violation=0:handle_segv=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
CXX_FOR_SANITIZE ?= $(or $(CXX),g++)
# handle_segv=0: a test crashes a benchmark child with SIGSEGV on purpose and expects to see
# SIGSEGV. Deselected: a timing assertion (microseconds per warm cache lookup), meaningless
# with an instrumented allocator in the process.
SANITIZE_DESELECT = --deselect tests/test_runtime_build.py::test_warm_path_is_fast
.PHONY: sanitize
sanitize: install-test
	$(SANITIZE_ENV) $(PYTHON) -m pytest -q -rfE -n 2 tests $(SANITIZE_DESELECT)
	$(SANITIZE_ENV) $(PYTHON) -m tests.fuzz --count $(SN) --seed $(SS)

# make torture [ROUNDS=50] [PROCS=16] [KILLS=100]  -- cache torture (tests/torture.py)
ROUNDS ?= 50
PROCS ?= 16
KILLS ?= 100
.PHONY: torture
torture: install-test
	$(PYTHON) -m tests.torture --rounds $(ROUNDS) --procs $(PROCS) --kills $(KILLS)
