"""Cache directory choice and safety, and the fresh_cache/clear_caches registry."""

import functools
import os
import stat
import tempfile
import warnings

import pytest

from cppcodegen.runtime import cachedir
from cppcodegen.runtime.cachedir import (
    CacheDirError, clear_caches, clear_on_fresh_cache, default_cache_dir,
    ensure_cache_dir, fresh_cache)

ENV = "CPPCODEGEN_CACHE_DIR"


@pytest.fixture(autouse=True)
def _isolated_registry(monkeypatch):
    """Objects registered by a test do not outlive it."""
    monkeypatch.setattr(cachedir, "_REGISTERED", list(cachedir._REGISTERED))


# -- default_cache_dir ---------------------------------------------------------

def test_env_var_wins(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV, str(tmp_path / "x"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "x"


def test_xdg_then_home(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "cppcodegen"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / ".cache" / "cppcodegen"


def test_evaluated_at_call_time(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV, str(tmp_path / "a"))
    assert default_cache_dir() == tmp_path / "a"
    monkeypatch.setenv(ENV, str(tmp_path / "b"))
    assert default_cache_dir() == tmp_path / "b"


def _fallback():
    return cachedir.Path(tempfile.gettempdir()) / f"cppcodegen_{os.getuid()}"


def test_fallback_missing_home(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "does-not-exist"))
    assert default_cache_dir() == _fallback()


def test_fallback_no_passwd_entry(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("HOME", raising=False)

    def no_entry(uid):
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.setattr(cachedir.pwd, "getpwuid", no_entry)
    assert default_cache_dir() == _fallback()


def test_fallback_home_not_writable(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    # root ignores permission bits, so simulate an unwritable home via access()
    monkeypatch.setattr(cachedir.os, "access", lambda p, mode: False)
    assert default_cache_dir() == _fallback()


# -- ensure_cache_dir ----------------------------------------------------------

def test_ensure_creates_private_dirs(tmp_path):
    target = tmp_path / "a" / "b"
    assert ensure_cache_dir(target) == target
    for d in (tmp_path / "a", target):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700
    ensure_cache_dir(target)  # idempotent


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777])
def test_ensure_refuses_group_or_world_writable(tmp_path, mode):
    target = tmp_path / "shared"
    target.mkdir()
    target.chmod(mode)
    with pytest.raises(CacheDirError) as info:
        ensure_cache_dir(target)
    msg = str(info.value)
    assert str(target) in msg and "writable" in msg
    assert "chmod 700" in msg and ENV in msg


def test_ensure_refuses_foreign_owner(tmp_path, monkeypatch):
    monkeypatch.setattr(cachedir.os, "geteuid", lambda: os.getuid() + 12345)
    with pytest.raises(CacheDirError, match="owned by uid"):
        ensure_cache_dir(tmp_path)


def test_ensure_refuses_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("")
    with pytest.raises(CacheDirError, match="not a directory"):
        ensure_cache_dir(f)


def test_cache_dir_error_is_runtime_error():
    assert issubclass(CacheDirError, RuntimeError)


# -- registry ------------------------------------------------------------------

def test_clear_on_fresh_cache_rejects_plain_objects():
    with pytest.raises(TypeError, match="cache_clear"):
        clear_on_fresh_cache({})

    class NotCallable:
        cache_clear = 3

    with pytest.raises(TypeError, match="NotCallable"):
        clear_on_fresh_cache(NotCallable())


def test_clear_caches_clears_lru_cache():
    calls = []

    @clear_on_fresh_cache
    @functools.lru_cache(maxsize=None)
    def f(x):
        calls.append(x)
        return x

    f(1), f(1)
    assert calls == [1]
    clear_caches()
    f(1)
    assert calls == [1, 1]


# -- fresh_cache ---------------------------------------------------------------

def test_fresh_cache_sets_and_restores_env(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV, "previous")
    with fresh_cache() as path:
        assert os.environ[ENV] == str(path)
        assert path.is_dir() and not any(path.iterdir())
        assert default_cache_dir() == path
    assert os.environ[ENV] == "previous"
    assert not path.exists()

    monkeypatch.delenv(ENV)
    with fresh_cache():
        pass
    assert ENV not in os.environ


def test_fresh_cache_reports_entries_and_respects_dir(tmp_path):
    entries = {}
    with fresh_cache(entries, dir=tmp_path) as path:
        assert path.parent == tmp_path
        (path / "sub").mkdir()
        (path / "sub" / "x.so").write_bytes(b"12345")
        (path / "build.json").write_text("{}")
    assert entries == {"sub/x.so": 5, "build.json": 2}
    assert not path.exists()


def test_fresh_cache_delete_false_keeps_dir(tmp_path):
    with fresh_cache(dir=tmp_path, delete=False) as path:
        (path / "f").write_text("x")
    assert (path / "f").exists()


def test_fresh_cache_keeps_dir_and_warns_on_error(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    with pytest.warns(UserWarning) as record:
        with pytest.raises(ZeroDivisionError):
            with fresh_cache() as path:
                (path / "f").write_text("x")
                1 / 0
    assert any(str(path) in str(w.message) for w in record)
    assert (path / "f").exists()
    assert ENV not in os.environ
    import shutil
    shutil.rmtree(path)


def test_fresh_cache_rejects_non_empty_entries():
    with pytest.raises(ValueError):
        with fresh_cache({"x": 1}):
            pass


def test_fresh_cache_clears_before_and_after():
    counter = []

    class Memo:
        def cache_clear(self):
            counter.append(1)

    clear_on_fresh_cache(Memo())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with fresh_cache():
            assert len(counter) == 1
    assert len(counter) == 2
