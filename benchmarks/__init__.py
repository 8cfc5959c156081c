"""The cppcodegen benchmark suite.

    python3 -m benchmarks.run [--quick] [--only NAME,...] [--repeat N] [--threads N] [--json PATH]
                              [--peers LIST] [--all-peers] [--no-warm] [--no-scaling]
                              [--readme [PATH]] [--from-json PATH]

Reports, per workload: time, speedups over NumPy and the best peer, GB/s and %BW, compile times;
then cppcodegen at 1 thread vs all threads (flagged when threads lose), the float32 sum's
relative error against a float64 sum per system, and cold/warm compile, per-call overhead and
``import cppcodegen`` time. ``--readme`` writes all that into README.md's bench-table section.

Modules:
    workloads  -- every workload, once, as a plain NumPy function + input maker + sizes
    peers      -- NumPy, cppcodegen and the optional peers (numexpr, numba, torch.compile, jax.jit)
    numba_impls -- hand-written Numba versions (imported only when numba is importable)
    measure    -- timing, correctness checks, memory bandwidth, cold/warm compile times
    report     -- terminal table, JSON, markdown and PNG writers
    run        -- the command line driver
Nothing here is imported by the compiler; importing this package imports nothing heavy.
"""
