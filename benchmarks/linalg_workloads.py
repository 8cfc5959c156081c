"""The linalg suite (being written): no workloads yet."""
from benchmarks.spec import Suite

SUITE = Suite(tag="linalg", title="linalg", note="", workloads={})
