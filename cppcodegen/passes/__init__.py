"""Graph -> loop IR (lower) -> scheduled kernels (schedule)."""
