"""What the test suite needs installed (Debian's Chromium, Playwright, socha): a test that
finds one missing fails, with a message saying how to install it, since ``./scripts/test.sh``
installs them all.  ``ARENA_ALLOW_SKIP=1`` turns those failures into skips, for a machine
that cannot have them."""
from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

import pytest

INSTALL = "./scripts/test.sh installs it (or set ARENA_ALLOW_SKIP=1 to skip the tests that need it)"


def missing(what: str) -> NoReturn:
    """Fail the test because ``what`` is not installed, or skip it under ``ARENA_ALLOW_SKIP=1``."""
    message = f"{what} is missing: {INSTALL}"
    if os.environ.get("ARENA_ALLOW_SKIP") == "1":
        pytest.skip(message)
    pytest.fail(message, pytrace=False)


def module(name: str, what: str) -> ModuleType:
    """Import ``name`` (e.g. ``"socha._socha"``), or :func:`missing` with ``what`` it is."""
    try:
        return importlib.import_module(name)
    except ImportError:
        missing(what)
