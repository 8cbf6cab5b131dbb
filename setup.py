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


def _extensions():
    exts = []
    only = os.environ.get("GPUSCOPE_BUILD_ONLY", "")
    for pyx in sorted(ROOT.glob("simulator/**/_*.pyx")):
        if only not in str(pyx):
            continue
        rel = pyx.relative_to(ROOT).with_suffix("")
        exts.append(
            Extension(
                ".".join(rel.parts),
                [str(pyx.relative_to(ROOT))],
                include_dirs=[numpy.get_include()],
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
