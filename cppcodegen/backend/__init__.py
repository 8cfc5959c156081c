"""Scheduled kernels -> C++ source (codegen, cexpr, gemmgen, writer)."""
