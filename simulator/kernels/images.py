"""``image2d_t`` and ``image3d_t``: reading with a sampler, writing, queries, the sampler's flags.

An image argument is the host's numpy array, indexed as C would (the last spatial axis is
x): a 2-D image is (height, width) or (height, width, channels), a 3-D image (depth,
height, width) or (depth, height, width, channels); channels 1, 2 or 4 are CL_R, CL_RG,
CL_RGBA. Its dtype is the channel type: ``float32`` is CL_FLOAT; ``uint8``/``uint16`` are
CL_UNORM_INT8/16 and ``int8``/``int16`` CL_SNORM_INT8/16 for ``read_imagef``/``write_imagef``
(normalized to [0, 1] or [-1, 1]), and the unnormalized integers for
``read_imagei``/``read_imageui``.

A sampler is the OR of the ``CLK_*`` flags below: normalized coordinates or not, the
addressing mode (none, clamp-to-edge, clamp to the border color, repeat, mirrored
repeat) and nearest or linear filtering (bilinear in 2-D, trilinear in 3-D), as the
OpenCL 1.2 specification's "Image Addressing and Filtering" section defines them, one
axis at a time. Texel addresses (row-major from the image's base) go to the timing
model like buffer reads.
"""
from itertools import product

import numpy as np

CLK_NORMALIZED_COORDS_FALSE = 0
CLK_NORMALIZED_COORDS_TRUE = 1
CLK_ADDRESS_NONE = 0
CLK_ADDRESS_CLAMP_TO_EDGE = 2
CLK_ADDRESS_CLAMP = 4
CLK_ADDRESS_REPEAT = 6
CLK_ADDRESS_MIRRORED_REPEAT = 8
CLK_FILTER_NEAREST = 0x10
CLK_FILTER_LINEAR = 0x20
_ADDRESS_BITS = 0xE

SAMPLER_FLAGS = {name: value for name, value in globals().items() if name.startswith("CLK_")}

_LAYOUTS = {2: "(height, width)", 3: "(depth, height, width)"}


def shape_error(shape: tuple, dims: int) -> str | None:
    """Why an array of ``shape`` is not a ``dims``-dimensional image, or None if it is one."""
    layout = _LAYOUTS[dims]
    channels = layout[:-1] + ", 1|2|4)"
    if len(shape) not in (dims, dims + 1) or (len(shape) == dims + 1 and shape[dims] not in (1, 2, 4)):
        return f"a {dims}-D image is a {layout} or {channels} array, not one of shape {tuple(shape)}"
    if 0 in shape:
        return f"an image has at least one texel, not shape {tuple(shape)}"
    return None


def _extent(data, dims):
    """(width, height[, depth]): the sizes along x, y, z."""
    return data.shape[:dims][::-1]


def _channels(data, dims):
    return 1 if data.ndim == dims else data.shape[dims]


def _to_float(values, dtype):
    """Channel values as floats: normalized integers for the UNORM/SNORM types."""
    if dtype.kind == "f":
        return values.astype(np.float32)
    if dtype in (np.uint8, np.uint16):
        return (values / np.float32(np.iinfo(dtype).max)).astype(np.float32)
    if dtype in (np.int8, np.int16):
        return np.maximum(values / np.float32(np.iinfo(dtype).max), -1.0).astype(np.float32)
    return values.astype(np.float32)


def _unnormalize(s, size, flags):
    """The unnormalized coordinate u of float coordinate ``s`` along an axis of ``size`` texels."""
    s = np.asarray(s, dtype=np.float64)
    if not flags & CLK_NORMALIZED_COORDS_TRUE:
        return s
    mode = flags & _ADDRESS_BITS
    if mode == CLK_ADDRESS_REPEAT:
        s = s - np.floor(s)
    elif mode == CLK_ADDRESS_MIRRORED_REPEAT:
        s = np.abs(s - 2 * np.rint(0.5 * s))
    return s * size


def _address(i, size, flags):
    """Integer texel index under the addressing mode; -1 marks the border (CLAMP).

    With normalized coordinates REPEAT leaves i in [-1, size], which wrapping maps into
    the image, and MIRRORED_REPEAT leaves it in [-1, size], which clamping does; with
    unnormalized ones both are undefined and wrap.
    """
    mode = flags & _ADDRESS_BITS
    if mode == CLK_ADDRESS_CLAMP:
        return np.where((i < 0) | (i >= size), -1, i)
    if mode == CLK_ADDRESS_REPEAT or \
            (mode == CLK_ADDRESS_MIRRORED_REPEAT and not flags & CLK_NORMALIZED_COORDS_TRUE):
        return np.mod(i, size)
    return np.clip(i, 0, size - 1)   # clamp-to-edge, mirrored repeat; 'none' is undefined out of range


def _fetch(data, dims, index, as_float):
    """RGBA of the texels at ``index`` ((i, j[, k]) arrays); border texels are (0, 0, 0, 0),
    or (0, 0, 0, 1) for images without alpha."""
    channels = _channels(data, dims)
    border = np.any([i < 0 for i in index], axis=0)
    inside = tuple(np.clip(i, 0, size - 1) for i, size in zip(index, _extent(data, dims)))
    texels = data[inside[::-1]].reshape(np.shape(inside[0]) + (channels,))
    values = _to_float(texels, data.dtype) if as_float else texels.astype(np.int64)
    rgba = np.zeros(np.shape(inside[0]) + (4,), dtype=values.dtype)
    rgba[..., 3] = 1
    rgba[..., :channels] = values
    rgba[border] = 0 if channels == 4 else np.array([0, 0, 0, 1], dtype=values.dtype)
    return rgba


def _linear(data, dims, u, flags, as_float):
    """(filtered RGBA, the first texel's index) of the 2^dims texels around ``u``: each axis
    contributes weight 1 - a to texel i0 and a to texel i1."""
    sizes = _extent(data, dims)
    low = [np.floor(x - 0.5) for x in u]
    frac = [(x - 0.5 - x0)[:, None] for x, x0 in zip(u, low)]
    i0 = [_address(x0.astype(np.int64), size, flags) for x0, size in zip(low, sizes)]
    i1 = [_address(x0.astype(np.int64) + 1, size, flags) for x0, size in zip(low, sizes)]
    value = 0
    for corner in product((0, 1), repeat=dims):
        corner = corner[::-1]   # x varies fastest, as the specification lists the terms
        weight = np.prod([a if bit else 1 - a for a, bit in zip(frac, corner)], axis=0)
        index = tuple(hi if bit else lo for lo, hi, bit in zip(i0, i1, corner))
        value = value + weight * _fetch(data, dims, index, as_float)
    return value, i0


def _addresses(region, dims, index):
    """Byte addresses of the texels at ``index`` (the border reads the nearest edge texel)."""
    data = region.data
    sizes = _extent(data, dims)
    inside = tuple(np.clip(i, 0, size - 1) for i, size in zip(index, sizes))
    texel = np.ravel_multi_index(inside[::-1], sizes[::-1])
    return region.base + texel * _channels(data, dims) * data.itemsize


def read_image(region, coord, flags: int, ty, lanes: int):
    """(values of type ``ty`` per lane, byte addresses) of ``read_image*(image, sampler, coord)``.

    ``coord`` holds (x, y) or (x, y, z, w) per lane; w is ignored.
    """
    data, dims = region.data, region.elem.dims
    coord = np.asarray(coord)
    coord = np.broadcast_to(coord, (lanes, coord.shape[-1]))[:, :dims]
    sizes = _extent(data, dims)
    as_float = ty.base.is_float
    if coord.dtype.kind == "f":
        u = [_unnormalize(coord[:, axis], size, flags) for axis, size in enumerate(sizes)]
        if flags & CLK_FILTER_LINEAR:
            value, index = _linear(data, dims, u, flags, as_float)
        else:
            index = [_address(np.floor(x).astype(np.int64), size, flags) for x, size in zip(u, sizes)]
            value = _fetch(data, dims, index, as_float)
    else:
        index = [_address(coord[:, axis].astype(np.int64), size, flags) for axis, size in enumerate(sizes)]
        value = _fetch(data, dims, index, as_float)
    return value.astype(ty.dtype), _addresses(region, dims, index)


def write_image(region, coord, value, lanes: int):
    """``write_image*(image, coord, color)`` for each lane; returns the byte addresses.

    Texels outside the image are not written (the specification leaves them undefined).
    """
    data, dims = region.data, region.elem.dims
    channels = _channels(data, dims)
    coord = np.asarray(coord)
    coord = np.broadcast_to(coord, (lanes, coord.shape[-1]))[:, :dims].astype(np.int64)
    value = np.broadcast_to(np.asarray(value), (lanes, 4))[:, :channels]
    index = tuple(coord[:, axis] for axis in range(dims))
    inside = np.all([(i >= 0) & (i < size) for i, size in zip(index, _extent(data, dims))], axis=0)
    dtype = data.dtype
    if dtype.kind in "iu" and value.dtype.kind == "f":
        info = np.iinfo(dtype)
        scale = info.max
        value = np.clip(np.rint(value * scale), info.min if dtype.kind == "i" else 0, info.max)
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        value = np.clip(value, info.min, info.max)
    target = data.reshape(data.shape[:dims] + (channels,))
    target[tuple(i[inside] for i in index[::-1])] = value[inside].astype(dtype)
    return _addresses(region, dims, index)


def image_query(region, fn: str):
    """get_image_width / get_image_height / get_image_depth / get_image_dim: an int, or
    (width, height) for a 2-D image's dimensions and (width, height, depth, 0) for a 3-D one's."""
    sizes = _extent(region.data, region.elem.dims)
    axis = {"get_image_width": 0, "get_image_height": 1, "get_image_depth": 2}.get(fn)
    if axis is not None:
        return np.int32(sizes[axis])
    return np.array(sizes + (0,) * (len(sizes) == 3), dtype=np.int32)
