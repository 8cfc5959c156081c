"""The program suite (being written): no workloads yet."""
from benchmarks.spec import Suite

SUITE = Suite(tag="program", title="program", note="", workloads={})
