"""Exclusive inter-process (and inter-thread) file locks.

In:  a lock-file path.
Out: :func:`exclusive_lock`, a context manager holding ``fcntl.flock(LOCK_EX)``
     on that file for the duration of the ``with`` body.

flock locks belong to an open file description, so two threads that each
open the file exclude each other just like two processes do. The kernel drops
the lock when its holder dies, so a killed process never leaves a stale lock;
the (empty) lock file itself is left in place on purpose: deleting it while
someone else may be about to lock it would break mutual exclusion.
"""

from __future__ import annotations

import contextlib
import fcntl
import os


@contextlib.contextmanager
def exclusive_lock(path):
    """Hold an exclusive lock on ``path`` (created 0o600 if missing)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
