"""Build the Cython extensions; all metadata lives in pyproject.toml.

Every ``_name.pyx`` under ``simulator/`` becomes the extension ``package._name``.
Each sits beside a pure-Python module of the same API, so a failed or skipped
build still leaves a working (slower) simulator. ``GPUSCOPE_BUILD_ONLY=engine``
builds only the extensions whose path contains that text (handy while developing one).
"""
import os
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


def _extensions():
    exts = []
    only = os.environ.get("GPUSCOPE_BUILD_ONLY", "")
    for pyx in sorted(ROOT.glob("simulator/**/_*.pyx")):
        if only not in str(pyx):
            continue
        rel = pyx.relative_to(ROOT).with_suffix("")
        name = ".".join(rel.parts)
        if name in HEADERS and not _have_header(HEADERS[name]):
            continue
        exts.append(
            Extension(
                name,
                [str(pyx.relative_to(ROOT))],
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
    )


setup(ext_modules=_extensions())
