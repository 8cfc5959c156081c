"""The plain data between stages: Graph (graph), loop IR (loopir), symbolic sizes (shapes), the op table (ufuncs).

Nothing is imported here: loopir and shapes load sympy, which the warm path never imports.
"""
