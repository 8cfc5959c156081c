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
file never shares the lock with one that created a new file. A waiter that is kept waiting
says so (with the holder's pid) after ``NOTICE_AFTER_S`` seconds, and gives up with
``LockTimeout`` after the caller's ``timeout``, if any.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
import warnings


NOTICE_AFTER_S = 10.0     # a waiter says who it waits for after this long


class LockTimeout(TimeoutError):
    """A lock stayed held by a live process for longer than the caller would wait."""


def _holder(fd) -> str:
    """The pid the holder wrote into the lock file, as text ('' if unknown)."""
    try:
        text = os.pread(fd, 32, 0).decode(errors="replace").strip()
    except OSError:
        return ""
    return text if text.isdigit() else ""


def _wait(fd, path, timeout):
    """flock(LOCK_EX) on ``fd``: at once when free; otherwise polled, with a warning naming
    the holding process after NOTICE_AFTER_S and LockTimeout after ``timeout`` seconds."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    start, delay, noticed = time.monotonic(), 0.001, False
    while True:
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        waited = time.monotonic() - start
        holder = _holder(fd)
        who = f"process {holder}" if holder else "another process"
        if not noticed and waited >= NOTICE_AFTER_S:
            noticed = True
            warnings.warn(f"cppcodegen: waiting for {who}, which holds {path} (building or "
                          f"removing that cache entry) for {waited:.0f} s so far",
                          RuntimeWarning, stacklevel=4)
        if timeout is not None and waited >= timeout:
            raise LockTimeout(f"{path} is still held by {who} after {waited:.0f} s; if that "
                              "process is stuck, stop it (the lock is released when it exits)")


@contextlib.contextmanager
def exclusive_lock(path, timeout=None):
    """Hold an exclusive lock on ``path`` (created 0o600 if missing); the holder's pid is
    written into the file so that a waiter can say whom it waits for. ``timeout``: seconds
    to wait before LockTimeout (None: wait for as long as the holder lives)."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            _wait(fd, path, timeout)
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
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
    except OSError:
        pass
    try:
        yield
    finally:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
