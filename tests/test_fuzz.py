"""CI slice of the random-graph fuzzer (tests/fuzz/, issue 8): fixed seeds, >= 500 random
graphs and >= 200 metamorphic pairs per run, a few g++ builds per chunk.

Each chunk generates CHUNK programs of one seed, makes a metamorphic twin of 2 in 5 of
them, compiles all of them as ONE function and compares every program with NumPy and
every twin with its original. A failure prints the program and the command reproducing
it; ``python3 -m tests.fuzz --seed S --start I --count 1`` shrinks it to a regression test.

KNOWN lists programs of these seeds that hit bugs already captured (strict xfail) in
tests/test_fuzz_regressions.py; they are left out of the batches (a failing program costs
~2*log2(batch) extra builds to isolate). When such a bug is fixed, its regression test turns
red; remove the xfail mark there and the entries here.
"""
import warnings

import pytest

from fuzz import generator, metamorphic, runner

SEED = 20240
CHUNK = 42
N_CHUNKS = 24          # 1008 graphs
PAIR = (0, 2)          # program i gets a twin when i % 5 in PAIR: ~17 per chunk, ~400 in all

# statement templates not generated in CI: known bugs hit by many programs
# (template substring -> regression test in tests/test_fuzz_regressions.py)
KNOWN_PATTERNS = {}
# compile errors of known bugs (substring of Outcome.signature() -> regression test); such
# failures are reported as warnings, not test failures
KNOWN_ERRORS = {}
# single programs of this seed that hit other known bugs (wrong values) -> regression test
KNOWN = {}


@pytest.fixture(autouse=True)
def _avoid_known_patterns():
    saved = set(generator.AVOID)
    generator.AVOID.update(KNOWN_PATTERNS)
    yield
    generator.AVOID.clear()
    generator.AVOID.update(saved)


def _chunk(c):
    start = c * CHUNK
    items = []
    for i in range(start, start + CHUNK):
        if (SEED, i) in KNOWN:
            continue
        p = generator.generate(SEED, i)
        t = metamorphic.twin(p, SEED, i) if i % 5 in PAIR else None
        items.append((i, p, t))
    return items


@pytest.mark.parametrize("c", range(N_CHUNKS))
def test_fuzz_chunk(c):
    items = _chunk(c)
    progs = [p for _, p, _ in items] + [t for _, _, t in items if t is not None]
    runner.INTERACTIONS.clear()
    outs = runner.run_programs(progs)
    res = {id(p): o for p, o in zip(progs, outs)}
    problems, known = [], []

    def is_known(o):
        if o.status == "error" and any(k in o.signature() for k in KNOWN_ERRORS):
            known.append(o.signature())
            return True
        return False

    n_pairs = 0
    for i, p, t in items:
        o = res[id(p)]
        assert o.status != "invalid", f"generator produced an invalid program: {o.message}"
        if is_known(o):
            continue
        if o.failed:
            problems.append(f"seed {SEED} #{i}: {o.status}: {o.message[:1500]}\n{p.source()}"
                            f"args = {p.args_source()}")
        if t is None:
            continue
        n_pairs += 1
        ot = res[id(t)]
        if is_known(ot):
            continue
        if ot.failed:
            problems.append(f"seed {SEED} #{i} (metamorphic twin): {ot.status}: "
                            f"{ot.message[:1500]}\n{t.source()}args = {t.args_source()}")
        elif not o.failed:
            msg = metamorphic.check_pair(o, ot)
            if msg:
                problems.append(f"seed {SEED} #{i}: {msg}\noriginal:\n{p.source()}twin:\n"
                                f"{t.source()}args = {p.args_source()}")
    for merged, o in runner.INTERACTIONS:
        if is_known(o):
            continue
        problems.append(f"programs that fail only together ({o.extra['members']}): "
                        f"{o.message[:1500]}\n{merged.source()}args = {merged.args_source()}")
    if known:
        warnings.warn(f"{len(known)} fuzz program(s) hit known bugs: {sorted(set(known))}")
    if problems:
        pytest.fail(f"{len(problems)} fuzz failure(s); reproduce and shrink with "
                    f"`python3 -m tests.fuzz --seed {SEED} --start <index> --count 1`\n\n" +
                    "\n\n".join(problems), pytrace=False)


def test_fuzz_counts():
    """The CI slice really runs >= 500 graphs and >= 200 pairs (KNOWN ones excluded)."""
    graphs = pairs = 0
    for c in range(N_CHUNKS):
        for i in range(c * CHUNK, (c + 1) * CHUNK):
            if (SEED, i) not in KNOWN:
                graphs += 1
                pairs += i % 5 in PAIR
    assert graphs >= 500 and pairs >= 200, (graphs, pairs)


def test_generator_reproducible():
    a = [generator.generate(7, i).source() for i in range(30)]
    b = [generator.generate(7, i).source() for i in range(30)]
    assert a == b
    p = generator.generate(7, 3)
    assert metamorphic.twin(p, 7, 3).source() == metamorphic.twin(p, 7, 3).source()


def test_generator_draws_updates_and_other_functions():
    """The generator draws in-place updates (of fresh copies and of the caller's arrays) and
    functions beyond ufuncs, reductions and views."""
    stmts = [s for i in range(300) for s in generator.generate(SEED, i).stmts]
    local = [s for s in stmts if "{t}[" in s.template and not s.writes_argument]
    args = [s for s in stmts if s.writes_argument]
    assert len(local) >= 20 and len(args) >= 5, (len(local), len(args))
    assert any("out={t}[" in s.template for s in local)
    misc = {k for s in stmts for k in ("np.flip", "np.diagonal", "np.tril", "np.triu",
                                       "np.concatenate", "np.stack", "np.sort", "np.roll",
                                       "np.tile", "np.repeat", "np.pad", "np.diff")
            if k in s.template}
    assert len(misc) >= 10, misc


def test_oracle_compares_the_arguments_a_program_writes():
    """A program that updates its argument: NumPy's write is the expected value of that
    argument after the call, an unwritten argument must stay as it was, and a compiled call
    that writes elsewhere fails the comparison."""
    import numpy as np
    from fuzz.oracle import Reference, compare
    src = ("def f(x0, x1):\n"
           "    v0 = x0; v0[1::2] += 1.5\n"
           "    return (x1 * 2,)\n")
    x0, x1 = np.arange(6.0), np.arange(3, dtype=np.int64)
    ref = Reference(src, "f", [x0, x1])
    assert ref.written == [True, False]
    assert np.array_equal(x0, np.arange(6.0)), "the oracle runs on copies"
    good = [np.array([0, 2.5, 2, 4.5, 4, 6.5]), x1.copy()]
    compare((x1 * 2,), ref, good)
    for bad in ([x0.copy(), x1.copy()],                       # the write is missing
                [good[0], x1 + 1]):                           # an unwritten argument changed
        with pytest.raises(AssertionError, match="argument"):
            compare((x1 * 2,), ref, bad)
