"""Packaging beyond pyproject.toml's metadata: ship libengine.so inside the package when the tree it is
built from has one, so that `pip install ./python` after `make` gives a package that finds its library
without ENGINE_LIB (engine/_lib.py looks beside the package first).

The library shipped is $ENGINE_LIB when set, else ../build/libengine.so (the checkout's `make`). Without
either the package is pure Python and finds the library at run time (ENGINE_LIB, a checkout's build/,
an installed PREFIX/lib, the dynamic linker). A wheel that carries the .so is tagged for this platform."""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))


def _built_library():
    path = os.environ.get("ENGINE_LIB") or os.path.join(HERE, "..", "build", "libengine.so")
    return path if os.path.isfile(path) else None


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        lib = _built_library()
        if lib:
            dest = os.path.join(self.build_lib, "engine", "libengine.so")
            self.announce(f"shipping {lib} as {dest}", level=2)
            shutil.copyfile(lib, dest)


class MaybeBinary(Distribution):
    def has_ext_modules(self):
        # A native library inside: the wheel is this platform's, not py3-none-any.
        return _built_library() is not None


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=MaybeBinary)
