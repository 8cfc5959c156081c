"""Beside the pipeline: the NumPy reference interpreter, check mode, the backend registry,
compile callbacks.
"""
