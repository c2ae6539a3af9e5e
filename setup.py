"""Builds the search's hot modules (model/compiled.py: COMPILED) from their own Python source
with Cython, each with a stamp of the source's SHA-256; the metadata is pyproject.toml's.

Optional: without Cython or a C compiler, when a module fails to compile, or with
ACTIVITY_CHECK_PURE_INSTALL=1, the install goes on in pure Python (the same output, slower)."""
import os
import runpy
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
_COMPILED = runpy.run_path(str(ROOT / "model" / "compiled.py"))
COMPILED, STAMP_SUFFIX, source_digest = (_COMPILED["COMPILED"], _COMPILED["STAMP_SUFFIX"],
                                         _COMPILED["source_digest"])


DIGESTS: dict = {}
"""Module name -> the SHA-256 of the source compiled (its stamp)."""


def _extensions() -> list:
    if os.environ.get("ACTIVITY_CHECK_PURE_INSTALL") == "1":
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("activity-check: Cython not available, pure Python", file=sys.stderr)
        return []
    from setuptools import Extension
    for name in COMPILED:  # the sources as they are compiled (cythonize reads them now)
        DIGESTS[name] = source_digest(ROOT / (name.replace(".", "/") + ".py"))
    modules = [Extension(name, [name.replace(".", "/") + ".py"], optional=True)
               for name in COMPILED]
    # annotation_typing off: annotations document, they do not type-check arguments
    return cythonize(modules, language_level=3, quiet=True, build_dir="build/cython",
                     compiler_directives={"binding": True, "annotation_typing": False})


class OptionalBuildExt(build_ext):
    """build_ext that compiles each module in parallel where it can, writes its stamp
    beside it, and leaves a module that fails to compile to pure Python."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

    def run(self):
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - the pure-Python fallback
            print(f"activity-check: compiling the hot modules failed ({exc}); pure Python",
                  file=sys.stderr)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001 - this module stays pure Python
            print(f"activity-check: {ext.name} not compiled ({exc}); pure Python",
                  file=sys.stderr)
            return
        self._stamp(Path(self.get_ext_fullpath(ext.name)), ext.name, DIGESTS[ext.name])

    @staticmethod
    def _stamp(target: Path, name: str, digest: str) -> None:
        """Write the stamp of module ``name``, compiled to ``target``, beside it."""
        stamp = target.parent / (name.rpartition(".")[2] + STAMP_SUFFIX)
        stamp.write_text(digest + "\n", encoding="ascii")

    def copy_extensions_to_source(self):
        """The in-place copies (an editable install), each with its stamp."""
        super().copy_extensions_to_source()
        build_py = self.get_finalized_command("build_py")
        for ext in self.extensions:
            inplace, regular = self._get_inplace_equivalent(build_py, ext)
            if os.path.exists(regular) and os.path.exists(inplace):
                self._stamp(Path(inplace), ext.name, DIGESTS[ext.name])


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
