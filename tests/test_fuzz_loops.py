"""CI slice of the loop fuzzer (tests/fuzz/loops.py, loopcheck.py; issue 15): random programs
with for/while loops, branches, break/continue/return and helper functions, written to a
module file, compiled with ``cppcodegen.compile`` and compared with the same function run as
plain Python (values within the fuzzer's tolerances, same dtypes, the same exception class
where Python raises), each with a metamorphic twin (a loop unrolled over a tuple of its
values, or rewritten as a while loop) that must agree.

A failure prints the program and the command that reproduces and shrinks it:
``python -m tests.fuzz --loops --seed S --start I --count 1``. Constructs of known, recorded
limitations (loops.KNOWN_LIMITS, tests/test_fuzz_loops_regressions.py) are not drawn here;
KNOWN lists programs of this seed that hit other recorded bugs.
"""
import numpy as np
import pytest

from fuzz import loopcheck, loops

SEED = 15015
COUNT = 15
# program index -> regression test in tests/test_fuzz_loops_regressions.py
KNOWN = {}


def test_loop_fuzz_slice():
    problems, n_twins = loopcheck.slice_problems(loops, SEED, COUNT, KNOWN)
    if problems:
        pytest.fail(f"{len(problems)} loop fuzz failure(s); reproduce and shrink with "
                    f"`python -m tests.fuzz --loops --seed {SEED} --start <index> --count 1`\n\n"
                    + "\n\n".join(problems), pytrace=False)
    assert n_twins >= COUNT // 3, n_twins


def test_loop_generator_reproducible_and_broad():
    a = [loops.generate(7, i).source() for i in range(40)]
    assert a == [loops.generate(7, i).source() for i in range(40)]
    assert [loops.twin(loops.generate(7, i), 7, i) is None for i in range(40)] == \
           [loops.twin(loops.generate(7, i), 7, i) is None for i in range(40)]
    feats, twins = {}, set()
    for i in range(300):
        p = loops.generate(SEED, i, set())
        compile(p.module_source(), "<loop program>", "exec")
        for f in p.features:
            feats[f] = feats.get(f, 0) + 1
        t = loops.twin(p, SEED, i, set())
        if t is not None:
            twins |= t.features - p.features
    want = ("nested triangular negative-step bound-int64 trip0 trip1 break continue return if elif "
            "ifexp bool-ops cond-reduce while while-true while-guarded-read while-converge "
            "array-store row-update rebind tuple-swap write-arg type-changes wrap-index oob "
            "helper-clip helper-blend helper-sumto helper-escape swap none-start").split()
    missing = [f for f in want if feats.get(f, 0) < 2]
    assert not missing, (missing, feats)
    assert {"twin-unroll", "twin-while"} <= twins, twins


def _judge(src, args, compiled_exc=None, compiled=None, mixed=()):
    mod = loopcheck.load_module("import math\nimport numpy as np\n\n" + src, "t")
    ref = loopcheck.LoopReference("import numpy as np\n" + src, mod.f, "f", args)
    return loopcheck.judge(ref, compiled, compiled_exc, loopcheck._copy(args), set(mixed))


def test_oracle_exceptions_and_types():
    """Python raising is the expected outcome: the same class compiled passes, a value or
    another class fails; a path-dependent Python type is known-type only when declared."""
    src = ("def f(x):\n    s = 0\n    for i in range(x.shape[0] + 1):\n        s += x[i]\n"
           "    return (s,)\n")
    x = np.arange(3.0)
    assert _judge(src, [x], IndexError("x"))[0] == "ok-raise"
    assert _judge(src, [x], compiled=(np.float64(3.0),))[0] == "no-raise"
    assert _judge(src, [x], ValueError("x"))[0] == "raise-mismatch"
    src0 = "def f(x):\n    s = 0\n    for i in range(x.shape[0]):\n        s += x[i]\n    return (s,)\n"
    e = np.zeros(0)
    assert _judge(src0, [e], compiled=(np.float64(0.0),))[0] == "mismatch"
    assert _judge(src0, [e], compiled=(np.float64(0.0),), mixed=(0,))[0] == "known-type"
    assert _judge(src0, [x], compiled=(np.float64(3.0),))[0] == "ok"
    assert _judge(src0, [x], compiled=(np.float64(3.5),))[0] == "mismatch"
