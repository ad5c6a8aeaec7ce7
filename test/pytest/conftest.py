"""pytest configuration: compiled programs and tuned schedules are cached in
a directory of this session's own (inherited by the tools the tests run),
never the user's, so no cached entry hides what a test checks and no test's
tuning changes another's schedules."""

import os
import shutil
import tempfile

import pytest

_CACHE_DIR = tempfile.mkdtemp(prefix="lamina-test-cache-")
os.environ["LAMINA_CACHE_DIR"] = _CACHE_DIR


def pytest_unconfigure(config):
    shutil.rmtree(_CACHE_DIR, ignore_errors=True)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache directory of the test's own, with caching on."""
    monkeypatch.setenv("LAMINA_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("LAMINA_CACHE", raising=False)
    return tmp_path
