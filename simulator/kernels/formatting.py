"""``printf`` formats: C's conversion specifications, with OpenCL's vector form.

OpenCL's printf is C99's with one addition: ``%v4f`` (``v`` and a width before the
length modifier and conversion) prints a vector's components separated by commas.
Length modifiers (``hh``, ``h``, ``l``, ``hl``) only say how wide the argument is and are
dropped; ``%a`` prints a hexadecimal float as C does; ``%s`` prints a string literal (the
only argument OpenCL C lets it take), cut to the precision if one is given.
"""
import re

import numpy as np

_SPEC = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\d+|\*)?(?:\.(?P<prec>\d+|\*))?"
                   r"(?:v(?P<vec>\d+))?(?P<len>hh|hl|h|ll|l)?(?P<conv>[diouxXcfFeEgGaAsp%])")


def _one(spec, conv, value):
    if conv in "aA":
        text = float(value).hex()
        return text.upper() if conv == "A" else text
    if conv in "diouxXc":
        value = int(value)
        if conv == "u":
            conv = "d"
        if conv == "i":
            conv = "d"
    elif conv == "p":
        return hex(int(value))
    elif conv == "s":
        value = str(value)
    else:
        value = float(value)
    return ("%" + spec + conv) % value


def conversions(fmt: str) -> list:
    """The conversion letter of each conversion of ``fmt`` that takes an argument, in order."""
    return [m.group("conv") for m in _SPEC.finditer(fmt) if m.group("conv") != "%"]


def c_format(fmt, values):
    """``fmt`` with C conversions applied to ``values`` (numbers or numpy vectors)."""
    out, pos, args = [], 0, list(values)
    for match in _SPEC.finditer(fmt):
        out.append(fmt[pos:match.start()])
        pos = match.end()
        conv = match.group("conv")
        if conv == "%":
            out.append("%")
            continue
        spec = match.group("flags") + (match.group("width") or "") + \
            ("." + match.group("prec") if match.group("prec") else "")
        value = args.pop(0) if args else 0
        if match.group("vec"):
            parts = np.atleast_1d(value)
            out.append(",".join(_one(spec, conv, p) for p in parts))
        else:
            out.append(_one(spec, conv, value))
    out.append(fmt[pos:])
    return "".join(out)
