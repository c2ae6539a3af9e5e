"""The search's hot modules compiled from their own Python source, and the guard that keeps
a compiled module from standing for a source it was not built from.

At install, ``setup.py`` compiles the modules of :data:`COMPILED` with Cython (from PyPI, a
build requirement in ``pyproject.toml``) into extension modules beside their ``.py`` files,
each with a *stamp*, ``NAME.compiled-from``, holding the SHA-256 of the source it was built
from. The ``.py`` files stay the specification and the only source: nothing is written by
hand for the compiled build, and where no C compiler or Cython is available, or
``ACTIVITY_CHECK_PURE_INSTALL=1`` is set, the install goes on without them (pure Python).

Python's importer prefers an extension module to a ``.py`` file of the same name, so an
edited source would silently be shadowed by a stale build. :func:`install` puts a finder
ahead of the importer's: for each module of :data:`COMPILED` it takes the extension only when
its stamp equals the SHA-256 of the ``.py`` beside it, and the ``.py`` otherwise (a stale
build, a missing stamp) or when ``ACTIVITY_CHECK_PURE=1`` is set in the environment (the
pure-Python reference run; ``tests/test_compiled.py`` compares the two runs' outputs byte for
byte). The output never depends on which one is loaded; only time does.
"""
from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path
from typing import Optional

__all__ = ["COMPILED", "STAMP_SUFFIX", "compiled_modules", "install", "source_digest"]

COMPILED = (
    "properties.search.sweep_cache",
    "properties.search.blocks",
    "properties.search.store",
    "properties.search.reading_classes",
    "properties.search.move_table",
    "properties.catalogue",
    "model.consumer",
)
"""The modules compiled at install (dotted names): the sweep's memo tables and block
expansion, fingerprints and interning, the step forked over knobs, the move table, the
property checks and the reference consumer's step: where the exhaustive search spends its
time (see benchmarks/README.md, issue 43)."""

STAMP_SUFFIX = ".compiled-from"
"""The stamp beside a compiled module: ``NAME.compiled-from`` holds the hex SHA-256 of the
``NAME.py`` it was compiled from."""

_PURE_ENV = "ACTIVITY_CHECK_PURE"


def source_digest(path: Path) -> str:
    """The hex SHA-256 of the file at ``path`` (bytes as they are). Raises OSError when it
    cannot be read."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _stamp_matches(source: Path) -> bool:
    """Whether the stamp beside ``source`` (``NAME.py``) names its current digest."""
    stamp = source.with_suffix(STAMP_SUFFIX)
    try:
        return stamp.read_text(encoding="ascii").strip() == source_digest(source)
    except (OSError, UnicodeDecodeError):
        return False


class _GuardFinder(importlib.abc.MetaPathFinder):
    """Finds the modules of :data:`COMPILED`: the importer's own spec when it is an extension
    module whose stamp matches its source and pure Python is not asked for, else a spec for
    the ``.py`` file (None for every other module: the importer's usual finders go on)."""

    def find_spec(self, fullname: str, path, target=None):
        if fullname not in COMPILED:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            return spec
        origin = Path(spec.origin)
        source = origin.parent / (fullname.rpartition(".")[2] + ".py")
        if not source.is_file():
            return spec  # an install without sources: the extension is all there is
        if os.environ.get(_PURE_ENV) == "1" or not _stamp_matches(source):
            return importlib.util.spec_from_file_location(fullname, source)
        return spec


_FINDER = _GuardFinder()


def install() -> None:
    """Put the guard (see the module) first on ``sys.meta_path``, once per process. Called
    by ``model/__init__.py`` and so before any module of :data:`COMPILED` is imported."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def compiled_modules() -> dict:
    """``{dotted name: True when the module now imported is the compiled one}`` for every
    module of :data:`COMPILED` that is imported (importing none)."""
    found = {}
    for name in COMPILED:
        module = sys.modules.get(name)
        if module is not None:
            loader: Optional[object] = getattr(module.__spec__, "loader", None)
            found[name] = isinstance(loader, importlib.machinery.ExtensionFileLoader)
    return found
