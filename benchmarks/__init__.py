"""The cppcodegen benchmark suite.

    python3 -m benchmarks.run [--quick] [--only NAME,...] [--repeat N] [--threads N] [--json PATH]

Modules:
    workloads  -- every workload, once, as a plain NumPy function + input maker + sizes
    peers      -- NumPy, cppcodegen and the optional peers (numexpr, numba, torch.compile, jax.jit)
    numba_impls -- hand-written Numba versions (imported only when numba is importable)
    measure    -- timing, correctness checks, memory bandwidth, cold/warm compile times
    report     -- terminal table, JSON, markdown and PNG writers
    run        -- the command line driver
Nothing here is imported by the compiler; importing this package imports nothing heavy.
"""
