"""Build the Cython extensions; all metadata lives in pyproject.toml.

The extensions are the modules listed in ``simulator/build.py`` (``EXTENSIONS``, and
``ACCELERATORS``, which have no plain-Python twin): a
hand-written ``_name.pyx`` beside its pure-Python reference, or a ``name.py`` written in
Cython's pure Python mode with the static types in ``name.pxd`` beside it, compiled from
that same source. A failed or skipped build still leaves a working (slower) simulator.
``GPUSCOPE_BUILD_ONLY=engine`` builds only the extensions whose path contains that text
(handy while developing one).
"""
import os
import runpy
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

ROOT = Path(__file__).parent


# Extensions that call a C library directly. ``_bulk`` needs SQLite's header
# (Debian's libsqlite3-dev, installed by scripts/install.sh); without it the writer
# uses the pure-Python bulk inserter.
LIBRARIES = {"simulator.tracing._bulk": ["sqlite3"]}
HEADERS = {"simulator.tracing._bulk": "sqlite3.h"}


def _have_header(name):
    return any(Path(d, name).is_file() for d in ("/usr/include", "/usr/local/include"))


def _source(name):
    """The file ``name`` compiles from: its ``.pyx``, else its pure-mode ``.py``."""
    base = Path(*name.split("."))
    pyx = base.with_suffix(".pyx")
    return pyx if (ROOT / pyx).is_file() else base.with_suffix(".py")


def _extensions():
    exts = []
    only = os.environ.get("GPUSCOPE_BUILD_ONLY", "")
    # read by path: the package itself need not be importable while it is being built
    listed = runpy.run_path(str(ROOT / "simulator" / "build.py"))
    names = [*listed["EXTENSIONS"], *listed["ACCELERATORS"]]
    for name in names:
        source = _source(name)
        if only not in str(source):
            continue
        if name in HEADERS and not _have_header(HEADERS[name]):
            continue
        exts.append(
            Extension(
                name,
                [str(source)],
                include_dirs=[numpy.get_include()],
                libraries=LIBRARIES.get(name, []),
                language="c++",
                extra_compile_args=["-O2"],
            )
        )
    return cythonize(
        exts,
        compiler_directives={
            "language_level": 3,
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
        quiet=True,
        nthreads=os.cpu_count() or 1,
    )


# Every core compiles: the extensions are independent, and the first install (the demo's
# first wait) is mostly their compilation.
setup(ext_modules=_extensions(), options={"build_ext": {"parallel": os.cpu_count() or 1}})
