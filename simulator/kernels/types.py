"""The value types of the kernel language and C's arithmetic conversions.

Scalars map one to one onto numpy dtypes, so a value of type ``uint`` is a numpy
``uint32`` array (one element per active lane) or a ``uint32`` scalar when the value
is the same for the whole launch. Vectors (``float4``...) carry a trailing axis of
their width. ``size_t`` is 32-bit here: the simulated GPU has a 32-bit address space.
"""
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Scalar:
    name: str
    dtype: np.dtype
    rank: int          # conversion rank: the higher rank wins (C's usual arithmetic conversions)

    @property
    def is_float(self):
        return self.dtype.kind == "f"

    @property
    def is_signed(self):
        return self.dtype.kind in "if"

    @property
    def size(self):
        return self.dtype.itemsize

    @property
    def width(self):
        return 1

    @property
    def base(self):
        return self

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class Vector:
    base: Scalar
    width: int

    @property
    def name(self):
        return f"{self.base.name}{self.width}"

    @property
    def size(self):
        return self.base.size * self.width

    @property
    def is_float(self):
        return self.base.is_float

    @property
    def dtype(self):
        return self.base.dtype

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class Pointer:
    space: str         # global, local, constant
    elem: object       # Scalar or Vector

    def __str__(self):
        return f"{self.space} {self.elem}*"


@dataclass(frozen=True)
class Array:
    space: str         # local or private
    elem: object
    length: int

    def __str__(self):
        return f"{self.space} {self.elem}[{self.length}]"


CHAR = Scalar("char", np.dtype(np.int8), 1)
UCHAR = Scalar("uchar", np.dtype(np.uint8), 1)
SHORT = Scalar("short", np.dtype(np.int16), 2)
USHORT = Scalar("ushort", np.dtype(np.uint16), 2)
INT = Scalar("int", np.dtype(np.int32), 3)
UINT = Scalar("uint", np.dtype(np.uint32), 4)
LONG = Scalar("long", np.dtype(np.int64), 5)
ULONG = Scalar("ulong", np.dtype(np.uint64), 6)
FLOAT = Scalar("float", np.dtype(np.float32), 7)
VOID = Scalar("void", np.dtype(np.int32), 0)

_SCALARS = {t.name: t for t in (CHAR, UCHAR, SHORT, USHORT, INT, UINT, LONG, ULONG, FLOAT)}
_ALIASES = {"size_t": UINT, "bool": INT, "_Bool": INT, "unsigned": UINT, "signed": INT}
VECTOR_WIDTHS = (2, 3, 4, 8, 16)

# Names the parser must be told are types (C99 already knows char, short, int, long, float).
TYPE_NAMES = (["uchar", "ushort", "uint", "ulong", "size_t", "bool"]
              + [f"{b}{w}" for b in ("char", "uchar", "short", "ushort", "int", "uint",
                                     "long", "ulong", "float") for w in VECTOR_WIDTHS])


def lookup(words):
    """The type named by pycparser's IdentifierType words, or None if unknown.

    ``unsigned int`` and friends are accepted; ``double`` and ``half`` are not part
    of the subset (None).
    """
    words = [w for w in words if w not in ("const", "volatile", "restrict")]
    if words[:1] == ["unsigned"]:
        rest = words[1:] or ["int"]
        base = lookup(rest)
        return {CHAR: UCHAR, SHORT: USHORT, INT: UINT, LONG: ULONG}.get(base)
    if words[:1] == ["signed"]:
        words = words[1:] or ["int"]
    if words in (["long", "long"], ["long", "int"], ["long", "long", "int"]):
        return LONG
    if words in (["short", "int"],):
        return SHORT
    if len(words) != 1:
        return None
    name = words[0]
    if name == "void":
        return VOID
    if name in _SCALARS:
        return _SCALARS[name]
    if name in _ALIASES:
        return _ALIASES[name]
    for width in VECTOR_WIDTHS:
        if name.endswith(str(width)) and name[: -len(str(width))] in _SCALARS:
            return Vector(_SCALARS[name[: -len(str(width))]], width)
    return None


def promote(a, b):
    """The type of ``a OP b`` under C's usual arithmetic conversions (OpenCL for vectors)."""
    width = max(a.width, b.width)
    base_a, base_b = a.base, b.base
    base = base_a if base_a.rank >= base_b.rank else base_b
    if base.rank < INT.rank:
        base = INT
    return base if width == 1 else Vector(base, width)


def with_base(t, base):
    """Type ``t`` with its element type replaced (int4 -> float4 for a convert)."""
    return base if t.width == 1 else Vector(base, t.width)
