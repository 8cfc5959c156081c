"""Around the pipeline: Dask (dask, chunks) and pickling compiled functions by reference."""
