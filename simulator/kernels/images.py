"""``image2d_t``: reading with a sampler, writing, and the sampler's flags.

An image argument is the host's (height, width) or (height, width, channels) numpy
array (channels 1, 2 or 4: CL_R, CL_RG, CL_RGBA). Its dtype is the channel type:
``float32`` is CL_FLOAT; ``uint8``/``uint16`` are CL_UNORM_INT8/16 and ``int8``/``int16``
CL_SNORM_INT8/16 for ``read_imagef``/``write_imagef`` (normalized to [0, 1] or [-1, 1]),
and the unnormalized integers for ``read_imagei``/``read_imageui``.

A sampler is the OR of the ``CLK_*`` flags below: normalized coordinates or not, the
addressing mode (none, clamp-to-edge, clamp to the border color, repeat, mirrored
repeat) and nearest or linear filtering, as OpenCL 1.2 section 8 defines them. Pixel
addresses (row-major from the image's base) go to the timing model like buffer reads.
"""
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


def _channels(data):
    return 1 if data.ndim == 2 else data.shape[2]


def _to_float(values, dtype):
    """Channel values as floats: normalized integers for the UNORM/SNORM types."""
    if dtype.kind == "f":
        return values.astype(np.float32)
    if dtype in (np.uint8, np.uint16):
        return (values / np.float32(np.iinfo(dtype).max)).astype(np.float32)
    if dtype in (np.int8, np.int16):
        return np.maximum(values / np.float32(np.iinfo(dtype).max), -1.0).astype(np.float32)
    return values.astype(np.float32)


def _texel_coords(coord, flags, width, height):
    """Unnormalized float coordinates of each lane's sample point."""
    x = np.asarray(coord[..., 0], dtype=np.float64)
    y = np.asarray(coord[..., 1], dtype=np.float64)
    if flags & CLK_NORMALIZED_COORDS_TRUE:
        mode = flags & _ADDRESS_BITS
        if mode == CLK_ADDRESS_REPEAT:
            x, y = x - np.floor(x), y - np.floor(y)
        elif mode == CLK_ADDRESS_MIRRORED_REPEAT:
            x = np.abs(x - 2 * np.rint(0.5 * x))
            y = np.abs(y - 2 * np.rint(0.5 * y))
        x, y = x * width, y * height
    return x, y


def _address(i, size, flags):
    """Integer texel index under the addressing mode; -1 marks the border (CLAMP)."""
    mode = flags & _ADDRESS_BITS
    if mode == CLK_ADDRESS_CLAMP:
        return np.where((i < 0) | (i >= size), -1, i)
    if mode in (CLK_ADDRESS_REPEAT, CLK_ADDRESS_MIRRORED_REPEAT) and not flags & CLK_NORMALIZED_COORDS_TRUE:
        return np.mod(i, size)
    return np.clip(i, 0, size - 1)   # clamp-to-edge; 'none' is undefined out of range


def _fetch(data, i, j, as_float):
    """RGBA of texels (i, j) (rows j, columns i); border texels are (0, 0, 0, 0) or
    (0, 0, 0, 1) for images without alpha."""
    channels = _channels(data)
    height, width = data.shape[:2]
    border = (i < 0) | (j < 0)
    ii, jj = np.clip(i, 0, width - 1), np.clip(j, 0, height - 1)
    texels = data[jj, ii].reshape(np.shape(ii) + (channels,))
    values = _to_float(texels, data.dtype) if as_float else texels.astype(np.int64)
    rgba = np.zeros(np.shape(ii) + (4,), dtype=values.dtype)
    rgba[..., 3] = 1
    if channels == 4:
        rgba[...] = values
    else:
        rgba[..., :channels] = values
    rgba[border] = 0 if channels == 4 else np.array([0, 0, 0, 1], dtype=values.dtype)
    return rgba


def read_image(region, coord, flags, ty, lanes):
    """(values of type ``ty`` per lane, byte addresses) of ``read_image*(image, sampler, coord)``."""
    data = region.data
    height, width = data.shape[:2]
    coord = np.broadcast_to(np.asarray(coord), (lanes, 2))
    as_float = ty.base.is_float
    if coord.dtype.kind == "f":
        x, y = _texel_coords(coord, flags, width, height)
        if flags & CLK_FILTER_LINEAR:
            x0, y0 = np.floor(x - 0.5), np.floor(y - 0.5)
            a, b = (x - 0.5 - x0)[:, None], (y - 0.5 - y0)[:, None]
            i0, j0 = x0.astype(np.int64), y0.astype(np.int64)
            i1, j1 = _address(i0 + 1, width, flags), _address(j0 + 1, height, flags)
            i0, j0 = _address(i0, width, flags), _address(j0, height, flags)
            value = ((1 - a) * (1 - b) * _fetch(data, i0, j0, True) + a * (1 - b) * _fetch(data, i1, j0, True)
                     + (1 - a) * b * _fetch(data, i0, j1, True) + a * b * _fetch(data, i1, j1, True))
            i, j = np.maximum(i0, 0), np.maximum(j0, 0)
        else:
            i = _address(np.floor(x).astype(np.int64), width, flags)
            j = _address(np.floor(y).astype(np.int64), height, flags)
            value = _fetch(data, i, j, as_float)
    else:
        i = _address(coord[:, 0].astype(np.int64), width, flags)
        j = _address(coord[:, 1].astype(np.int64), height, flags)
        value = _fetch(data, i, j, as_float)
    addresses = region.base + (np.maximum(j, 0) * width + np.maximum(i, 0)) * _channels(data) * data.itemsize
    return value.astype(ty.dtype), addresses


def write_image(region, coord, value, lanes):
    """``write_image*(image, coord, color)`` for each lane; returns the byte addresses."""
    data = region.data
    height, width = data.shape[:2]
    channels = _channels(data)
    coord = np.broadcast_to(np.asarray(coord), (lanes, 2)).astype(np.int64)
    value = np.broadcast_to(np.asarray(value), (lanes, 4))[:, :channels]
    i, j = coord[:, 0], coord[:, 1]
    inside = (i >= 0) & (i < width) & (j >= 0) & (j < height)
    dtype = data.dtype
    if dtype.kind in "iu" and value.dtype.kind == "f":
        info = np.iinfo(dtype)
        scale = info.max
        value = np.clip(np.rint(value * scale), info.min if dtype.kind == "i" else 0, info.max)
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        value = np.clip(value, info.min, info.max)
    target = data.reshape(height, width, channels)
    target[j[inside], i[inside]] = value[inside].astype(dtype)
    texel = np.clip(j, 0, height - 1) * width + np.clip(i, 0, width - 1)
    return region.base + texel * channels * data.itemsize


def image_query(region, fn):
    """get_image_width / get_image_height / get_image_dim."""
    height, width = region.data.shape[:2]
    if fn == "get_image_width":
        return np.int32(width)
    if fn == "get_image_height":
        return np.int32(height)
    return np.array([width, height], dtype=np.int32)
