"""The random-graph fuzzer with ``dynamic=True``: every size of every input is a symbol passed
at run time, so the symbolic lowering (index expressions, reshapes, slices, loop bounds,
reductions, guards) is checked against NumPy on the same programs as the static slice.
Reproduce a failure with ``python3 -m tests.fuzz --dynamic --seed S --start I --count 1``."""
import pytest

from fuzz import generator, runner

SEED = 31337
CHUNK = 42
N_CHUNKS = 4           # 168 graphs


@pytest.fixture
def dynamic_runner():
    saved, avoid = runner.DYNAMIC, set(generator.AVOID)
    runner.DYNAMIC = True
    # refused with symbolic sizes (np.linspace's number of samples must be known)
    generator.AVOID.add("np.linspace(")
    yield
    runner.DYNAMIC = saved
    generator.AVOID.clear()
    generator.AVOID.update(avoid)


@pytest.mark.parametrize("c", range(N_CHUNKS))
def test_fuzz_dynamic_chunk(c, dynamic_runner):
    progs = [generator.generate(SEED, i) for i in range(c * CHUNK, (c + 1) * CHUNK)]
    runner.INTERACTIONS.clear()
    outs = runner.run_programs(progs)
    problems = [f"seed {SEED} #{c * CHUNK + k}: {o.status}: {o.message[:1500]}\n{p.source()}"
                f"args = {p.args_source()}" for k, (p, o) in enumerate(zip(progs, outs))
                if o.failed]
    problems += [f"programs that fail only together: {o.message[:1500]}\n{m.source()}"
                 for m, o in runner.INTERACTIONS]
    if problems:
        pytest.fail(f"{len(problems)} dynamic-shape fuzz failure(s); reproduce with "
                    f"`python3 -m tests.fuzz --dynamic --seed {SEED} --start <index> --count 1`"
                    "\n\n" + "\n\n".join(problems), pytrace=False)
