"""Print a (shrunk) failing program as a ready-to-paste pytest regression test.

In: a ``Program`` and its ``Outcome``. Out: the text of a test function for
tests/test_fuzz_regressions.py (which imports ``np``, ``pytest``, ``make_input`` and
``check_program``), marked ``xfail(strict=True)`` until the bug is fixed.
"""
from __future__ import annotations

import textwrap


def regression_test(p, outcome=None, name="case", reason="TODO: diagnose") -> str:
    first = ""
    if outcome is not None and outcome.message:
        first = outcome.message.strip().splitlines()[0][:150]
    fn = textwrap.indent(p.source("f"), "    ")
    lines = [f"# found by the fuzzer ({p.label}); {outcome.status if outcome else ''}: {first}",
             f"@pytest.mark.xfail(strict=True, reason={reason!r})",
             f"def test_fuzz_{name}():",
             fn.rstrip("\n"),
             f"    args = {p.args_source()}",
             "    check_program(f, args)", ""]
    return "\n".join(lines)
