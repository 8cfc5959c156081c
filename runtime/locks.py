"""Exclusive inter-process (and inter-thread) file locks.

In:  a lock-file path.
Out: :func:`exclusive_lock`, a context manager holding ``fcntl.flock(LOCK_EX)``
     on that file for the duration of the ``with`` body.

flock locks belong to an open file description, so two threads that each
open the file exclude each other just like two processes do. The kernel drops
the lock when its holder dies, so a killed process never leaves a stale lock.
A lock file may be deleted by whoever holds it (``python -m cppcodegen cache
clear`` does): after locking, we check that the path still names the file we
locked, and start over if it does not, so a waiter that had opened the old
file never shares the lock with one that created a new file.
"""

from __future__ import annotations

import contextlib
import fcntl
import os


@contextlib.contextmanager
def exclusive_lock(path):
    """Hold an exclusive lock on ``path`` (created 0o600 if missing)."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                st, mine = os.stat(path), os.fstat(fd)
                same = (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)
            except FileNotFoundError:
                same = False
        except BaseException:
            os.close(fd)
            raise
        if same:
            break
        os.close(fd)                  # the file was removed (or replaced) while we waited
    try:
        yield
    finally:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
