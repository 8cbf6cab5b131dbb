"""Lowering calls: OpenCL's built-in functions, and user functions (inlined).

``CallLowering.expr_FuncCall`` dispatches a call by name: work-item functions, math and
integer built-ins (typed by ``builtins.math_result_type``), ``convert_<type>[_sat][_rte]``
and ``as_<type>``, atomics, ``vloadN``/``vstoreN``, images, built-ins with pointer results
(``sincos``, ``fract``, ``modf``, ``frexp``, ``remquo``), the work-group and sub-group
functions (``collectives``) and finally the program's own functions, which
``statements.KernelLowering.call_user`` inlines.
"""
from pycparser import c_ast

from . import ir
from . import types as T
from .annotations import WATCH_CALL
from .builtins import MATH, WORK_ITEM, math_result_type
from .collectives import arity, split, value_type
from .encoding import literal_text
from .formatting import conversions

ATOMIC_OPS = ("add", "sub", "inc", "dec", "xchg", "min", "max", "and", "or", "xor", "cmpxchg")
# Built-ins that return one value and store another through their last argument, a pointer:
# name -> (parameters, math built-in returned, math built-in stored).
_POINTER_RESULTS = {"sincos": ("x, cosval", "sin", "cos"), "fract": ("x, iptr", "fract", "floor"),
                    "modf": ("x, iptr", "modf_frac", "trunc"),
                    "frexp": ("x, exp", "frexp_mantissa", "frexp_exponent"),
                    "remquo": ("x, y, quo", "remainder", "remquo_quotient")}
_IMAGE_READS = {"read_imagef": T.FLOAT, "read_imagei": T.INT, "read_imageui": T.UINT}
_IMAGE_WRITES = {"write_imagef": T.FLOAT, "write_imagei": T.INT, "write_imageui": T.UINT}
_IMAGE_QUERIES = {"get_image_width", "get_image_height", "get_image_depth", "get_image_dim"}


class CallLowering:
    """Calls (see the module docstring); mixed into ``KernelLowering``."""

    def expr_FuncCall(self, node):
        if not isinstance(node.name, c_ast.ID):
            raise self.unsupported(node, "calls through expressions (function pointers)")
        name = node.name.name
        args = node.args.exprs if node.args else []
        pos = self.pos(node)
        if name in self.file.functions:
            return self.call_user(node, name, args)
        if name in WORK_ITEM:
            return self.work_item(node, name, args)
        if name.startswith(("convert_", "as_")):
            return self.conversion(node, name, args)
        if name in _POINTER_RESULTS:
            return self.pointer_result(node, name, args)
        if name in MATH:
            return self.call_math(node, name, [self.expr(a) for a in args])
        if name in ("barrier", "sub_group_barrier", "mem_fence", "read_mem_fence", "write_mem_fence",
                    WATCH_CALL):
            raise self.error(node, f"{name} is a statement, not a value")
        if name.startswith(("atomic_", "atom_")):
            return self.atomic(node, name, args)
        if name in _IMAGE_READS:
            return self.image_read(node, name, args)
        if name in _IMAGE_QUERIES:
            return self.image_query(node, name, args)
        if split(name) is not None:
            return self.collective(node, name, args)
        if name in ("async_work_group_copy", "async_work_group_strided_copy"):
            return self.async_copy(node, name, args)
        if name.startswith(("vload_half", "vloada_half")):
            return self.load_half(node, name, args)
        width = vector_width(name, "vload")
        if width:
            if len(args) != 2:
                raise self.error(node, f"{name} takes (offset, pointer)")
            view = self.vector_view(args[1], width)
            if view is not None:
                return ir.Load(view.name, self.offset(args[0]), type=view.elem, **pos)
            pointer = self.vector_pointer(node, args[1], args[0], width, name)
            return ir.PtrLoad(pointer, type=pointer.type.elem, **pos)
        if name in ("printf", "wait_group_events", "prefetch") or name.startswith(("vstore", "write_image")):
            raise self.error(node, f"{name} is a statement, not a value")
        if name.startswith(("vload", "get_image")):
            raise self.unsupported(node, f"built-in {name}")
        raise self.error(node, f"call to undeclared function '{name}'")

    def call_math(self, node, name, values):
        result, arg_types = math_result_type(name, [v.type for v in values])
        if result is None:
            raise self.error(node, f"{name} does not accept ({', '.join(str(v.type) for v in values)})")
        values = [self.convert(v, t) for v, t in zip(values, arg_types)]
        return ir.Call(name, values, type=result, **self.pos(node))

    def pointer_result(self, node, name, args):
        """``sincos(x, &c)``, ``fract(x, &i)``, ``modf(x, &i)``, ``frexp(x, &e)``,
        ``remquo(x, y, &q)``: store one result through the pointer, return the other. The
        pointer must point to the stored result's type (``int4 *`` for frexp of a float4)."""
        params, returned, stored = _POINTER_RESULTS[name]
        if len(args) != params.count(",") + 1:
            raise self.error(node, f"{name} takes ({params})")
        pos = self.pos(node)
        # Both results read the value arguments, which run once: into temporaries.
        saves, values = zip(*(self.saved(self.expr(arg), arg) for arg in args[:-1]))
        values = list(values)
        pointer = self.expr(args[-1])
        part = self.call_math(node, stored, values)
        if not isinstance(pointer.type, T.Pointer) or pointer.type.elem != part.type:
            raise self.error(args[-1], f"{name} needs a pointer to {part.type} as its last argument,"
                                       f" not {pointer.type}")
        store = ir.PtrStore(pointer, part, None, **pos)
        result = self.call_math(node, returned, values)
        return ir.StmtExpr(ir.Block([*saves, store], **pos), result, False, type=result.type, **pos)

    def collective(self, node, name, args):
        """A work-group or sub-group function (see ``collectives``): its value argument
        converted to the type it works in, its local ids (broadcast) to size_t."""
        scope, kind, _ = split(name)
        fewest, most = arity(scope, kind)
        if not fewest <= len(args) <= most:
            count = str(fewest) if fewest == most else f"{fewest} to {most}"
            raise self.error(node, f"{name} takes {count} argument{'s' if most > 1 else ''}")
        value = self.expr(args[0])
        ty = value_type(kind, value.type)
        if ty is None:
            wanted = "an int predicate" if kind in ("all", "any") else \
                "a scalar int, uint, long, ulong, float or double"
            raise self.error(args[0], f"{name} takes {wanted}, not {value.type}")
        values = [self.convert(value, ty)]
        for arg in args[1:]:
            local_id = self.expr(arg)
            if isinstance(local_id.type, (T.Pointer, T.Struct, T.Opaque)) or local_id.type.is_float \
                    or local_id.type.width != 1:
                raise self.error(arg, f"{name} needs an integer local id, not {local_id.type}")
            values.append(self.convert(local_id, T.UINT))
        return ir.Collective(name, values, type=ty, **self.pos(node))

    def conversion(self, node, name, args):
        if len(args) != 1:
            raise self.error(node, f"{name} takes one argument")
        head = name.split("_")
        ty = T.lookup([head[1]]) if len(head) > 1 else None
        if ty is None or ty is T.VOID or isinstance(ty, T.Opaque):
            raise self.error(node, f"unknown conversion {name}")
        value = self.expr(args[0])
        if isinstance(value.type, (T.Pointer, T.Struct, T.Opaque)):
            raise self.error(node, f"{name} cannot take a {value.type}")
        if name.startswith("as_"):
            if T.storage_size(value.type) != T.storage_size(ty):
                raise self.error(node, f"{name} needs an argument of the same size, not {value.type}")
            return ir.Call("as", [value], type=ty, **self.pos(node))
        if value.type.width != ty.width:
            raise self.error(node, f"{name} needs a {ty.width}-wide argument, not {value.type}")
        modes = head[2:]
        if any(m not in ("sat", "rte", "rtz", "rtp", "rtn") for m in modes):
            raise self.error(node, f"unknown conversion {name}")
        if modes:
            return ir.Call("convert_" + "_".join(modes), [value], type=ty, **self.pos(node))
        return self.convert(value, ty)

    # -- memory built-ins ------------------------------------------------------------------
    def atomic(self, node, name, args):
        """``atomic_OP(pointer, value)``/``atom_OP`` on an integer (or xchg: float) location."""
        op = name.split("_", 1)[1]
        if op not in ATOMIC_OPS:
            raise self.unsupported(node, f"atomic operation {name}")
        arity = {"inc": 1, "dec": 1, "cmpxchg": 3}.get(op, 2)
        if len(args) != arity:
            raise self.error(node, f"{name} takes {arity} argument{'s' if arity > 1 else ''}")
        pointer = self.expr(args[0])
        if not isinstance(pointer.type, T.Pointer):
            raise self.error(node, f"{name} needs a pointer to the location, not {pointer.type}")
        elem = pointer.type.elem
        allowed = (T.INT, T.UINT, T.LONG, T.ULONG) + ((T.FLOAT,) if op == "xchg" else ())
        if elem not in allowed:
            raise self.error(node, f"{name} works on int, uint, long or ulong, not {elem}")
        if pointer.type.space in ("constant",):
            raise self.error(node, f"{name} cannot update constant memory")
        cmp = self.convert(self.expr(args[1]), elem) if op == "cmpxchg" else None
        value = self.convert(self.expr(args[-1]), elem) if arity > 1 else None
        return ir.Atomic(op, pointer, value, cmp, type=elem, **self.pos(node))

    def vector_view(self, pointer, width):
        """The ``@width`` vector view of a named scalar array, for vloadN/vstoreN (or None)."""
        target = self.resolve(pointer, pointer.name) if isinstance(pointer, c_ast.ID) else None
        if not isinstance(target, ir.ArrayInfo) or target.elem.width != 1 or target.dims == ("scalar",) \
                or not isinstance(target.elem, T.Scalar):
            return None
        view = f"{target.name}@{width}"
        if view not in self.arrays:
            self.arrays[view] = ir.ArrayInfo(view, target.space, T.Vector(target.elem, width),
                                             length=target.length // width, is_param=False,
                                             view_of=target.name)
        return self.arrays[view]

    def vector_pointer(self, node, pointer_node, offset_node, width, name):
        """``p + offset * width`` as a pointer to ``width``-vectors (vloadN/vstoreN on a pointer)."""
        pointer = self.expr(pointer_node)
        if not isinstance(pointer.type, T.Pointer) or not isinstance(pointer.type.elem, T.Scalar):
            raise self.error(node, f"{name} needs a pointer to scalars as its last argument")
        elem = pointer.type.elem
        moved = self.advance(node, pointer, self.offset(offset_node), scale=elem.size * width)
        return ir.Cast(moved, type=T.Pointer(pointer.type.space, T.Vector(elem, width)), **self.pos(node))

    def vstore(self, node, name, width, args):
        if len(args) != 3:
            raise self.error(node, f"{name} takes (data, offset, pointer)")
        value = self.expr(args[0])
        if value.type.width != width:
            raise self.error(node, f"{name} stores a {width}-wide vector, not {value.type}")
        view = self.vector_view(args[2], width)
        if view is not None:
            return ir.Store(view.name, self.offset(args[1]), self.convert(value, view.elem), None,
                            **self.pos(node))
        pointer = self.vector_pointer(node, args[2], args[1], width, name)
        return ir.PtrStore(pointer, self.convert(value, pointer.type.elem), None, **self.pos(node))

    def local_linear_id(self, node):
        """(linear local id, work-group size) of the work-item, as int expressions."""
        pos = self.pos(node)

        def item(fn, dim):
            uniform = fn == "get_local_size"
            return self.convert(ir.WorkItem(fn, dim, type=T.UINT, uniform=uniform, wave=uniform, **pos),
                                T.INT)

        lid = item("get_local_id", 2)
        size = item("get_local_size", 2)
        for dim in (1, 0):
            lid = self.binary(node, "+", self.binary(node, "*", lid, item("get_local_size", dim)),
                              item("get_local_id", dim))
            size = self.binary(node, "*", size, item("get_local_size", dim))
        return lid, size

    def async_copy(self, node, name, args):
        """``async_work_group_copy(dst, src, n, event)`` and its strided form: the work-items of
        the group copy the elements between them (element ``i`` by work-item ``i mod size``),
        so the copy is complete when the statement is; the event is 0."""
        strided = "strided" in name
        if len(args) != (5 if strided else 4):
            raise self.error(node, f"{name} takes (dst, src, count{', stride' if strided else ''}, event)")
        dst, src = self.expr(args[0]), self.expr(args[1])
        for side in (dst, src):
            if not isinstance(side.type, T.Pointer):
                raise self.error(node, f"{name} copies between pointers, not {side.type}")
        count = self.offset(args[2])
        stride = self.offset(args[3]) if strided else None
        self.expr(args[-1])
        index = self.unique("copy")
        self.variables[index] = T.INT
        pos = self.pos(node)

        def at():
            return ir.Var(index, type=T.INT, **pos)

        src_at = self.binary(node, "*", at(), stride) if strided and src.type.space != "local" else at()
        dst_at = self.binary(node, "*", at(), stride) if strided and dst.type.space != "local" else at()
        element = ir.PtrLoad(self.advance(node, src, src_at), type=src.type.elem, **pos)
        copy = ir.PtrStore(self.advance(node, dst, dst_at), self.convert(element, dst.type.elem), None, **pos)
        lid, size = self.local_linear_id(node)
        branch = self.open_branch(node, "loop")
        loop = ir.Loop(self.binary(node, "<", at(), count), ir.Block([copy], **pos),
                       ir.Assign(index, self.binary(node, "+", at(), size), None, **pos), branch.id, False,
                       **pos)
        return ir.StmtExpr(ir.Block([ir.Assign(index, lid, None, **pos), loop], **pos),
                           self.const(0, T.INT, node), False, type=T.INT, **pos)

    def half_pointer(self, node, name, pointer_node, offset_node, width):
        pointer = self.expr(pointer_node)
        if not isinstance(pointer.type, T.Pointer) or pointer.type.elem is not T.HALF:
            raise self.error(node, f"{name} needs a pointer to half")
        aligned = name.startswith(("vloada_", "vstorea_"))
        lanes = 4 if width == 3 and aligned else width  # vloada_half3 steps as half4
        moved = self.advance(node, pointer, self.offset(offset_node), scale=2 * lanes)
        elem = T.HALF if width == 1 else T.Vector(T.HALF, width)
        return ir.Cast(moved, type=T.Pointer(pointer.type.space, elem), **self.pos(node))

    def load_half(self, node, name, args):
        """``vload_half[N](offset, p)``: halves read and widened to float."""
        width = int(name.rsplit("half", 1)[1] or 1)
        if len(args) != 2 or width not in (1, 2, 3, 4, 8, 16):
            raise self.error(node, f"{name} takes (offset, pointer)")
        pointer = self.half_pointer(node, name, args[1], args[0], width)
        value = ir.PtrLoad(pointer, type=pointer.type.elem, **self.pos(node))
        return self.convert(value, T.FLOAT if width == 1 else T.Vector(T.FLOAT, width))

    def store_half(self, node, name, args):
        """``vstore_half[N][_rte...](value, offset, p)``: floats narrowed to halves."""
        base = name.split("_r")[0] if "_rt" in name else name
        width = int(base.rsplit("half", 1)[1] or 1)
        if len(args) != 3:
            raise self.error(node, f"{name} takes (value, offset, pointer)")
        pointer = self.half_pointer(node, name, args[2], args[1], width)
        value = self.expr(args[0])
        if value.type.width != width:
            raise self.error(node, f"{name} stores {width} value(s), not {value.type}")
        return ir.PtrStore(pointer, self.convert(value, pointer.type.elem), None, **self.pos(node))

    def printf(self, node, args):
        """``printf(format, args...)``. A string literal argument is kept as its text (a
        ``Const`` of type ``constant char *``): OpenCL C 6.15.14 lets ``%s`` print string
        literals only, and a string literal is no value for any other conversion."""
        if not args or not _is_string(args[0]):
            raise self.error(node, "printf needs a string literal format")
        text = self.string_text(args[0])
        wanted = conversions(text)
        values = []
        for k, arg in enumerate(args[1:]):
            conv = wanted[k] if k < len(wanted) else None   # arguments past the format are ignored
            if _is_string(arg):
                if conv not in ("s", None):
                    raise self.error(arg, f"a string literal can only be printed with %s, not %{conv}")
                values.append(ir.Const(self.string_text(arg), type=T.Pointer("constant", T.CHAR),
                                       uniform=True, **self.pos(arg)))
                continue
            value = self.expr(arg)
            if conv == "s":
                raise self.error(arg, f"%s prints a string literal, not a value of type {value.type}")
            if isinstance(value.type, (T.Struct, T.Opaque)):
                raise self.error(arg, f"printf cannot print a {value.type}")
            values.append(value)
        return ir.Printf(text, values, **self.pos(node))

    def string_text(self, node):
        """The text of string literal ``node`` as ``printf`` shows it
        (``encoding.literal_text``: its bytes as clang compiles them, one that is not
        UTF-8 as windows-1252 shows it)."""
        try:
            return literal_text(node.value)
        except ValueError as exc:
            raise self.error(node, str(exc)) from None

    # -- images ----------------------------------------------------------------------------
    def image(self, node, arg):
        info = self.resolve(arg, arg.name) if isinstance(arg, c_ast.ID) else None
        if not isinstance(info, ir.ArrayInfo) or info.space != "image":
            raise self.error(node, "the first argument must be an image2d_t or image3d_t argument")
        return info

    def image_coord(self, node, name, info, arg, bases):
        """The coordinates of an image built-in: int2/float2 for a 2-D image, int4/float4
        (x, y, z; w ignored) for a 3-D one, of one of ``bases``."""
        coord = self.expr(arg)
        width = 2 if info.elem.dims == 2 else 4
        if coord.type.width != width or coord.type.base not in bases:
            wanted = " or ".join(f"{base}{width}" for base in bases)
            raise self.error(node, f"{name} on an {info.elem} needs {wanted} coordinates, not {coord.type}")
        return coord

    def image_read(self, node, name, args):
        if len(args) not in (2, 3):
            raise self.error(node, f"{name} takes (image, sampler, coord) or (image, coord)")
        info = self.image(node, args[0])
        sampler = self.convert(self.expr(args[1]), T.UINT) if len(args) == 3 else None
        # The sampler-less forms (OpenCL C 1.2) take integer coordinates only.
        coord = self.image_coord(node, name, info, args[-1], (T.INT, T.FLOAT) if sampler else (T.INT,))
        return ir.ImageRead(info.name, sampler, coord, type=T.Vector(_IMAGE_READS[name], 4), **self.pos(node))

    def image_write(self, node, name, args):
        if len(args) != 3:
            raise self.error(node, f"{name} takes (image, coord, color)")
        info = self.image(node, args[0])
        coord = self.image_coord(node, name, info, args[1], (T.INT,))
        value = self.convert(self.expr(args[2]), T.Vector(_IMAGE_WRITES[name], 4))
        return ir.ImageWrite(info.name, coord, value, **self.pos(node))

    def image_query(self, node, name, args):
        if len(args) != 1:
            raise self.error(node, f"{name} takes one image")
        info = self.image(node, args[0])
        dims = info.elem.dims
        if name == "get_image_depth" and dims != 3:
            raise self.error(node, f"get_image_depth takes an image3d_t, not an {info.elem}")
        ty = T.Vector(T.INT, 2 if dims == 2 else 4) if name == "get_image_dim" else T.INT
        return ir.Call(name, [ir.AddrOf(info.name, type=info.elem, uniform=True, **self.pos(node))],
                       type=ty, **self.pos(node))

    def builtin_statement(self, node, name, args):
        """Calls that are statements (barrier, vstoreN, write_image...), or None."""
        pos = self.pos(node)
        if name == WATCH_CALL:
            target = args[0].name
            info = self.resolve(node, target)
            if not isinstance(info, ir.ArrayInfo):
                raise self.error(node, f"@watch needs an array or pointer argument, '{target}' is not one")
            return ir.Watch(info.name, **pos)
        if name == "barrier" or name == "work_group_barrier":
            if len(args) not in (1, 2):
                raise self.error(node, "barrier takes one argument (CLK_LOCAL_MEM_FENCE ...)")
            flags = self.integer_constant(args[0])
            if flags is None:
                raise self.error(node, "barrier flags must be constant")
            return ir.Barrier(flags, **pos)
        if name == "sub_group_barrier":
            if len(args) not in (1, 2) or self.integer_constant(args[0]) is None:
                raise self.error(node, "sub_group_barrier takes constant fence flags (and a memory scope)")
            # A sub-group is a wavefront, whose work-items run in lockstep: nothing to wait for.
            return ir.Block([], **pos)
        if name in ("mem_fence", "read_mem_fence", "write_mem_fence", "wait_group_events", "prefetch"):
            # Ordering is already sequential in the functional model, and async copies are
            # complete when issued: nothing to wait for.
            return ir.Block([], **pos)
        if name == "printf":
            return self.printf(node, args)
        if name.startswith(("vstore_half", "vstorea_half")):
            return self.store_half(node, name, args)
        width = vector_width(name, "vstore")
        if width:
            return self.vstore(node, name, width, args)
        if name in _IMAGE_WRITES:
            return self.image_write(node, name, args)
        return None


def _is_string(node):
    return isinstance(node, c_ast.Constant) and node.type == "string"


def vector_width(name, prefix):
    """N for ``vloadN``/``vstoreN`` (N in 2, 3, 4, 8, 16), else 0."""
    if name.startswith(prefix) and name[len(prefix):] in ("2", "3", "4", "8", "16"):
        return int(name[len(prefix):])
    return 0
