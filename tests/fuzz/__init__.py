"""Random-graph differential fuzzing of cppcodegen against NumPy (issue 8).

Modules, in pipeline order:
  inputs.py       value domains and memory layouts of input arrays (``make_input``)
  program.py      a program as plain data -> Python source (and batch sources)
  generator.py    random programs of 1-12 ops, checked op by op with NumPy while drawn
  metamorphic.py  rewrites of a program into an equivalent one (pairs must agree)
  oracle.py       NumPy reference + measured tolerances, and the comparator
  runner.py       many programs -> one compiled batch function; bisection of failures
  shrink.py       a failing program -> a minimal failing program
  report.py       a minimal program -> a ready-to-paste pytest regression test
  __main__.py     ``python3 -m tests.fuzz --count N --seed S``
  loops.py        random programs with loops and branches (issue 15), and their twins
  loopcheck.py    those checked against plain Python; ``python3 -m tests.fuzz --loops ...``
  dataslices.py   the loop fuzzer's dataslice family (``--loops --family dataslice``): slices
                  whose bounds come from array values (``a[lo[i]:hi[i]]``) in loops
"""
import os
import sys

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)          # `import helpers`, as the rest of the suite does
