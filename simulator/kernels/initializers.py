"""C99 initializer lists (6.7.8): which subobject each initializer of a braced list sets.

The initializers of a braced list for a struct or an array set its subobjects in order,
or where a designation says (``.member``, ``[index]``, chained as ``[1].pos``); after a
designated one, the order goes on from the subobject that follows it. The braces around
a subaggregate may be left out (brace elision): its initializers then run on through its
elements, unless an expression of the subaggregate's own struct type sets it whole. A
union takes one initializer, for its first member or for the designated one. A vector is
not an aggregate here: a braced list of components (``{1, 2}``, the rest zero) or an
expression initializes it whole.

To follow the order through elision, the aggregate's *slots* are numbered: one per
scalar, vector or union it holds, depth first. A positional initializer goes to the
slot after the last one set, into the innermost subaggregate the list is already inside
(6.7.8p20); a braced list sets one subobject and numbers its own slots.

``place(lowering, ty, init, name)`` resolves all of that against the aggregate type
``ty`` (an array of unknown length, ``ArrayType(elem, None)``, grows to what its
initializers reach) and returns the ``Placement``s in source order (a later one
overrides an earlier one on the same subobject, as C says) with the array's length.
"""
from dataclasses import dataclass

from pycparser import c_ast

from . import types as T


@dataclass(frozen=True)
class Placement:
    """One initializer: the subobject it sets and its lowered value."""

    path: tuple     # array indexes and member names from the aggregate to the subobject
    ty: object      # the subobject's type
    value: object   # the lowered expression, or the lowered parts of a braced vector
    node: object    # the initializer, for error locations


@dataclass(frozen=True)
class _Sub:
    """A subobject: its type, its path and its first slot in the braced list's numbering."""

    ty: object
    path: tuple
    start: int


def _is_union(ty):
    return isinstance(ty, T.Struct) and len(ty.fields) > 1 and all(f[2] == 0 for f in ty.fields)


def _aggregate(ty):
    """Whether ``ty``'s initializers set it member by member or element by element."""
    return isinstance(ty, T.ArrayType) or (isinstance(ty, T.Struct) and not _is_union(ty))


def _span(ty):
    """The slots of ``ty``: one per scalar, vector or union it holds."""
    if isinstance(ty, T.ArrayType):
        return ty.length * _span(ty.elem)
    if _aggregate(ty):
        return sum(_span(f[1]) for f in ty.fields)
    return 1


def _named(ty):
    """``ty`` as a message names it (an array of unknown length as ``int[]``)."""
    if isinstance(ty, T.ArrayType) and ty.length is None:
        return f"{ty.elem}[]"
    return str(ty)


def place(lowering, ty: T.Struct | T.ArrayType, init: c_ast.InitList, name: str) -> tuple[list, int]:
    """(placements, top-level length) of braced list ``init`` for aggregate ``ty`` of
    the object ``name``; ``lowering`` lowers the expressions and reports errors."""
    placer = _Placer(lowering, name)
    reach = placer.braced(ty, init, ())
    if isinstance(ty, T.ArrayType):
        length = ty.length if ty.length is not None else -(-reach // _span(ty.elem))
    else:
        length = 1
    return placer.placements, length


class _Placer:
    def __init__(self, lowering, name):
        self.lowering = lowering
        self.name = name
        self.placements = []

    def error(self, node, reason):
        return self.lowering.error(node, reason)

    def braced(self, ty, init, path):
        """Place the initializers of braced list ``init`` for ``ty`` (at ``path``); returns
        the slots they reach."""
        if not _aggregate(ty):
            self.union(ty, init, path)
            return 1
        unbounded = isinstance(ty, T.ArrayType) and ty.length is None
        size = None if unbounded else _span(ty)
        cursor = reach = 0
        for item in init.exprs:
            if isinstance(item, c_ast.NamedInitializer):
                cursor = self.designate(ty, item.name, item.expr, path, 0)
            else:
                if size is not None and cursor >= size:
                    raise self.too_many(init, ty)
                cursor = self.put(self.current(ty, cursor, path), item)
            reach = max(reach, cursor)
        return reach

    def too_many(self, init, ty):
        if not isinstance(ty, T.ArrayType):
            return self.error(init, f"too many initializers for {ty}")
        if any(isinstance(item, c_ast.NamedInitializer) for item in init.exprs):
            return self.error(init, f"too many initializers for '{self.name}' (one goes past its"
                                    f" {ty.length} elements)")
        return self.error(init, f"too many initializers for '{self.name}'"
                                f" ({len(init.exprs)} for {ty.length})")

    def union(self, ty, init, path):
        """A braced list for a union: one initializer, of its first or designated member."""
        if len(init.exprs) > 1:
            first = ty.fields[0][1]
            if _aggregate(first) and not isinstance(init.exprs[0], c_ast.NamedInitializer):
                raise self.lowering.unsupported(init, f"leaving out the braces of {first} inside a union")
            raise self.too_many(init, ty)
        for item in init.exprs:
            if isinstance(item, c_ast.NamedInitializer):
                self.designate(ty, item.name, item.expr, path, 0)
            else:
                self.put(self.child_at(_Sub(ty, path, 0), 0), item, elide=False)

    def designate(self, ty, designators, value, path, start, elide=True):
        """``designators = value`` in ``ty`` (first slot ``start``); returns the slot after
        the designated subobject. ``elide``: as for ``put``."""
        head, *rest = designators
        sub = self.designated(ty, head, path, start)
        if _is_union(ty):
            # A union holds one member: what follows goes after the union, so the member
            # cannot take the initializers after this one (brace elision).
            if rest:
                self.designate(sub.ty, rest, value, sub.path, sub.start, elide=False)
            else:
                self.put(sub, value, elide=False)
            return start + 1
        if rest:
            return self.designate(sub.ty, rest, value, sub.path, sub.start, elide)
        return self.put(sub, value, elide=elide)

    def designated(self, ty, designator, path, start):
        """The subobject one designator names in ``ty``: ``.member`` (an ``ID``) or
        ``[index]`` (an ``ArrayRef`` without a name, see ``cparser``)."""
        if isinstance(designator, c_ast.ID):
            member = designator.name
            if not isinstance(ty, T.Struct):
                raise self.error(designator, f"'.{member}' names a member, but {_named(ty)} is not a"
                                             " struct or union")
            slot = start
            for field_name, field_ty, _ in ty.fields:
                if field_name == member:
                    return _Sub(field_ty, path + (member,), slot)
                if not _is_union(ty):
                    slot += _span(field_ty)
            raise self.error(designator, f"{ty} has no member '{member}'")
        if not isinstance(ty, T.ArrayType):
            raise self.error(designator, f"'[...]' names an element, but {_named(ty)} is not an array")
        index = self.lowering.const_int(designator.subscript)
        if index < 0 or (ty.length is not None and index >= ty.length):
            raise self.error(designator, f"array index {index} is outside {_named(ty)}")
        return _Sub(ty.elem, path + (index,), start + index * _span(ty.elem))

    def current(self, ty, cursor, path):
        """The subobject a positional initializer at slot ``cursor`` sets: the child, at
        ``cursor``, of the innermost subaggregate already entered (begun but not ended)."""
        sub = _Sub(ty, path, 0)
        while True:
            child = self.child_at(sub, cursor)
            if child.start == cursor:
                return child
            sub = child

    def child_at(self, sub, slot):
        """The member or element of aggregate (or union) ``sub`` that holds ``slot``."""
        ty = sub.ty
        if isinstance(ty, T.ArrayType):
            each = _span(ty.elem)
            index = (slot - sub.start) // each
            return _Sub(ty.elem, sub.path + (index,), sub.start + index * each)
        start = sub.start
        for field_name, field_ty, _ in ty.fields:
            if _is_union(ty) or slot < start + _span(field_ty):
                return _Sub(field_ty, sub.path + (field_name,), start)
            start += _span(field_ty)
        raise AssertionError("slot past the end of its aggregate")

    def put(self, sub, item, lowered=None, elide=True):
        """Set subobject ``sub`` from ``item`` (``lowered``: the expression ``item``, already
        lowered); returns the slot after what it set. Without ``elide`` (in a union) an
        expression cannot start a subaggregate whose braces are left out."""
        ty = sub.ty
        end = sub.start + (_span(ty) if _aggregate(ty) else 1)
        if lowered is None and isinstance(item, c_ast.InitList):
            if isinstance(ty, (T.ArrayType, T.Struct)):
                self.braced(ty, item, sub.path)
            else:
                self.leaf(sub, item)
            return end
        if lowered is None:
            lowered = self.lowering.expr(item)
        if lowered.type == ty or not isinstance(ty, (T.ArrayType, T.Struct)):
            self.placements.append(Placement(sub.path, ty, lowered, item))
            return end
        if _is_union(ty):
            self.put(self.child_at(sub, sub.start), item, lowered, elide=False)
            return end
        if not elide:
            raise self.lowering.unsupported(item, f"leaving out the braces of {ty} inside a union")
        # Brace elision: the expression sets the subaggregate's first subobject, and the
        # initializers after it go on through the subaggregate.
        return self.put(self.child_at(sub, sub.start), item, lowered)

    def leaf(self, sub, init):
        """A braced initializer of a scalar (``{x}``) or a vector (``{x, y, z, w}``)."""
        for item in init.exprs:
            if isinstance(item, c_ast.NamedInitializer):
                raise self.error(item, f"designators cannot initialize {sub.ty}")
        if isinstance(sub.ty, T.Vector):
            parts = [self.lowering.expr(e) for e in init.exprs]
            self.placements.append(Placement(sub.path, sub.ty, parts, init))
            return
        if len(init.exprs) != 1:
            raise self.error(init, f"{sub.ty} takes one initializer in braces, not {len(init.exprs)}")
        self.placements.append(Placement(sub.path, sub.ty, self.lowering.expr(init.exprs[0]),
                                         init.exprs[0]))
