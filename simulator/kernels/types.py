"""The value types of the kernel language and C's arithmetic conversions.

Scalars map one to one onto numpy dtypes, so a value of type ``uint`` is a numpy
``uint32`` array (one element per active lane) or a ``uint32`` scalar when the value
is the same for the whole launch. Vectors (``float4``...) carry a trailing axis of
their width. ``size_t`` is 32-bit here: the simulated GPU has a 32-bit address space
(CL_DEVICE_ADDRESS_BITS 32, which OpenCL allows).

A pointer value is one 64-bit integer per lane, a *handle*: the memory object's number
in the launch times 2**40 plus a byte offset into it (see ``regions``), so pointer
arithmetic, comparison and casts between pointer types are integer operations. A struct
is a numpy structured dtype laid out with OpenCL's alignment rules, the same layout a
host program uses for a buffer of structs.
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


HANDLE_DTYPE = np.dtype(np.int64)


class _Whole:
    """A type that is one value, not a vector: pointers, structs, images and samplers."""

    width = 1
    is_float = False
    is_signed = False
    rank = 0

    @property
    def base(self):
        return self


@dataclass(frozen=True)
class Pointer(_Whole):
    space: str         # global, local, constant, private
    elem: object       # Scalar, Vector, Struct, Pointer or VOID

    is_signed = True
    size = 8
    rank = 5
    dtype = HANDLE_DTYPE

    @property
    def name(self):
        return str(self)

    def __str__(self):
        return f"{self.space} {self.elem}*"


@dataclass(frozen=True)
class Struct(_Whole):
    """A struct (or union) type; ``fields`` are (name, type, byte offset)."""

    name: str
    fields: tuple
    size: int
    align: int

    @property
    def dtype(self):
        return np.dtype({"names": [f[0] for f in self.fields],
                         "formats": [storage_format(f[1]) for f in self.fields],
                         "offsets": [f[2] for f in self.fields], "itemsize": self.size})

    def field(self, name):
        for field_name, ty, offset in self.fields:
            if field_name == name:
                return ty, offset
        return None

    def __str__(self):
        return f"struct {self.name}"


@dataclass(frozen=True)
class Opaque(_Whole):
    """An object only built-ins use: ``image2d_t``/``image3d_t`` (a handle to an image
    argument of ``dims`` dimensions) or ``sampler_t`` (the sampler's bit flags)."""

    name: str
    dims: int = 0   # 2 or 3 for an image type, 0 otherwise

    size = 8

    @property
    def dtype(self):
        return np.dtype(np.int64 if self.name != "sampler_t" else np.uint32)

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class ArrayType(_Whole):
    """A fixed-size array inside a struct (``float w[4];``)."""

    elem: object
    length: int

    @property
    def size(self):
        return storage_size(self.elem) * self.length

    def __str__(self):
        return f"{self.elem}[{self.length}]"


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
HALF = Scalar("half", np.dtype(np.float16), 7)
FLOAT = Scalar("float", np.dtype(np.float32), 8)
DOUBLE = Scalar("double", np.dtype(np.float64), 9)
VOID = Scalar("void", np.dtype(np.int32), 0)
IMAGE2D = Opaque("image2d_t", 2)
IMAGE3D = Opaque("image3d_t", 3)
SAMPLER = Opaque("sampler_t")

_SCALARS = {t.name: t for t in (CHAR, UCHAR, SHORT, USHORT, INT, UINT, LONG, ULONG, HALF, FLOAT,
                                DOUBLE)}
_ALIASES = {"size_t": UINT, "bool": INT, "_Bool": INT, "unsigned": UINT, "signed": INT,
            "ptrdiff_t": INT, "intptr_t": INT, "uintptr_t": UINT,
            "image2d_t": IMAGE2D, "image3d_t": IMAGE3D, "sampler_t": SAMPLER, "event_t": INT}
VECTOR_WIDTHS = (2, 3, 4, 8, 16)
# OpenCL types that parse but that the subset does not run (refused by name).
UNSUPPORTED_TYPES = ("image1d_t", "image1d_array_t", "image1d_buffer_t", "image2d_array_t",
                     "image2d_depth_t", "image2d_array_depth_t")

# Names the parser must be told are types (C99 already knows char, short, int, long, float, double).
TYPE_NAMES = (["uchar", "ushort", "uint", "ulong", "half", "size_t", "bool", "ptrdiff_t",
               "intptr_t", "uintptr_t", "image2d_t", "image3d_t", "sampler_t", "event_t",
               *UNSUPPORTED_TYPES]
              + [f"{b}{w}" for b in ("char", "uchar", "short", "ushort", "int", "uint",
                                     "long", "ulong", "float", "double", "half")
                 for w in VECTOR_WIDTHS])


def lookup(words):
    """The type named by pycparser's IdentifierType words, or None if unknown.

    ``unsigned int`` and friends are accepted; ``double`` and ``half`` are not part
    of the subset (None).
    """
    words = [w for w in words if w not in ("const", "volatile", "restrict")]
    if words in (["long", "double"],):
        return DOUBLE
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


def is_image(ty) -> bool:
    """Whether ``ty`` is an image type (``image2d_t``, ``image3d_t``)."""
    return isinstance(ty, Opaque) and ty.dims > 0


def promote(a: Scalar | Vector, b: Scalar | Vector) -> Scalar | Vector:
    """The type of ``a OP b`` under OpenCL's usual arithmetic conversions (6.2.6).

    Two scalars follow C: the integer promotions (to ``int``), then the higher rank. A
    vector is not promoted: ``uchar4 + uchar4`` is a ``uchar4`` and wraps, and a scalar
    beside a vector takes the vector's component type (``vector_operand_error`` says when
    that is not allowed). Of two vectors, the one of higher rank: the operators refuse two
    vector types, built-ins such as ``min`` convert one to the other.
    """
    if a.width == 1 and b.width == 1:
        base = a if a.rank >= b.rank else b
        return INT if base.rank < INT.rank else base
    if a.width == 1 or b.width == 1:
        return a if b.width == 1 else b
    return a if a.base.rank >= b.base.rank else b


def vector_operand_error(a: Scalar | Vector, b: Scalar | Vector) -> str | None:
    """Why operands of types ``a`` and ``b`` cannot be combined (OpenCL C 6.2.6), or None:
    two vectors must be of one type, and a scalar beside a vector must not have a greater
    rank than the vector's components. That rank is not C's: floating types rank above
    integers, then the larger type ranks higher, and an unsigned integer ranks above the
    signed one of its size (``int4 + 1u`` is an error, ``uint4 + 1`` is not)."""
    if a.width != 1 and b.width != 1:
        return None if a == b else f"vectors of different types ({a}, {b})"
    vector, scalar = (a, b) if b.width == 1 else (b, a)
    if vector.width == 1:
        return None

    def rank(t):
        return t.is_float, t.size, not t.is_signed

    if rank(scalar) > rank(vector.base):
        return (f"the scalar operand ({scalar}) has a greater rank than the vector's components "
                f"({vector}); cast it to {vector.base}")
    return None


def with_base(t, base):
    """Type ``t`` with its element type replaced (int4 -> float4 for a convert)."""
    return base if t.width == 1 else Vector(base, t.width)


def storage_size(ty):
    """Bytes between consecutive elements of an array of ``ty``. Arrays and buffers of
    3-component vectors are packed here (12 bytes per float3, as ``vload3`` reads them);
    inside a struct a 3-component vector takes the room of 4 (``field_size``), as OpenCL
    lays structs out for the host."""
    return ty.size


def field_size(ty):
    """Bytes a struct member takes: OpenCL gives a 3-component vector the room of 4."""
    if isinstance(ty, Vector) and ty.width == 3:
        return ty.base.size * 4
    return storage_size(ty)


def alignment(ty):
    """OpenCL's alignment of ``ty``: its size for scalars and vectors (3 counts as 4)."""
    if isinstance(ty, Struct):
        return ty.align
    if isinstance(ty, ArrayType):
        return alignment(ty.elem)
    return field_size(ty)


def storage_format(ty):
    """numpy format of ``ty`` as a struct field."""
    if isinstance(ty, ArrayType):
        return (storage_format(ty.elem), (ty.length,))
    if isinstance(ty, Vector):
        return (ty.base.dtype, (ty.width,))
    return ty.dtype


def layout(name, members):
    """A ``Struct`` from (name, type) members laid out as C does, or a union (``None`` name
    list passed as ``union=True`` is handled by the caller giving equal offsets)."""
    offset, align, fields = 0, 1, []
    for field_name, ty in members:
        a = alignment(ty)
        offset = -(-offset // a) * a
        fields.append((field_name, ty, offset))
        offset += field_size(ty)
        align = max(align, a)
    return Struct(name, tuple(fields), -(-offset // align) * align, align)


def union_layout(name, members):
    """A union: every member at offset 0."""
    size = max((field_size(t) for _, t in members), default=0)
    align = max((alignment(t) for _, t in members), default=1)
    return Struct(name, tuple((n, t, 0) for n, t in members), -(-size // align) * align, align)
