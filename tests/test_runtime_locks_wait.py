"""A build lock held by a live process: the waiter names the holder, and can time out."""
import os
import subprocess
import sys
import textwrap
import time
import warnings

import pytest

from cppcodegen.runtime import locks


def _holder(path, seconds):
    code = textwrap.dedent(f"""
        import time, sys
        from cppcodegen.runtime.locks import exclusive_lock
        with exclusive_lock({str(path)!r}):
            print("locked", flush=True)
            time.sleep({seconds})
    """)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "locked"
    return p


def test_waiter_names_the_holder_and_times_out(tmp_path, monkeypatch):
    path = tmp_path / "k.lock"
    p = _holder(path, 30)
    try:
        monkeypatch.setattr(locks, "NOTICE_AFTER_S", 0.2)
        t0 = time.monotonic()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with pytest.raises(locks.LockTimeout, match=f"process {p.pid}"):
                with locks.exclusive_lock(path, timeout=1.0):
                    pass
        assert 0.9 < time.monotonic() - t0 < 10
        assert any(f"process {p.pid}" in str(x.message) for x in w)
    finally:
        p.kill()
        p.wait()
    with locks.exclusive_lock(path, timeout=5):       # released when the holder died
        assert open(path).read() == str(os.getpid())


def test_free_lock_is_taken_at_once(tmp_path):
    t0 = time.monotonic()
    with locks.exclusive_lock(tmp_path / "a.lock"):
        pass
    assert time.monotonic() - t0 < 1
