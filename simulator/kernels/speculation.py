"""If-conversion: the conditionals a GCN compiler turns into selects, not branches.

AMD's OpenCL compiler for GCN and CDNA (ROCm) is LLVM: clang and the AMDGPU back end.
Its middle end flattens a small conditional into straight-line code before the back
end sees it, in SimplifyCFG (``llvm/lib/Transforms/Utils/SimplifyCFG.cpp``, the
thresholds' defaults there and in ``Scalar/SimplifyCFGPass.cpp``):

* ``foldTwoEntryPHINode``: an ``if``/``else``, an ``if`` without ``else`` or a ``?:``
  whose sides only compute values used after it becomes a ``select`` of those values
  when every instruction of its sides is safe to execute on every lane
  (``isSafeToSpeculativelyExecute``: no memory access, no side effect, no integer
  division by a value that may be zero), their cost together is at most
  ``SPECULATION_BUDGET`` or they are a single instruction of any cost
  (``-speculate-one-expensive-inst``, on by default), and at most ``MAX_MERGED``
  values meet after it (PHI nodes);
* ``foldBranchToCommonDest``: ``a && b`` and ``a || b`` compute ``b`` on every lane
  and combine the two conditions when ``b`` is its condition and at most
  ``BONUS_INSTRUCTIONS`` other instructions, all safe to execute on every lane.

The back end issues such a select as one ``v_cndmask_b32`` per 32-bit component (an
``s_cselect_b32`` for a wave-uniform integer); what stays a branch becomes EXEC-mask
code (SIAnnotateControlFlow, then ``s_and_saveexec``/``s_cbranch_execz``...). The back
end's own early if-conversion (``-amdgpu-early-ifcvt``, ``AMDGPUTargetMachine.cpp``)
is off by default, so nothing else becomes a select. Costs here are the simulator's
instruction counts (``costs``), where LLVM asks the target for them (``TTI``, one
``TCC_Basic`` per simple instruction). Memory is never read speculatively: LLVM does
so only where it can prove the address dereferenceable, which it cannot for an index
into an OpenCL buffer.

Not modelled, so left as branches where LLVM may still flatten them: a side whose load
repeats one made before the conditional (LLVM reuses the loaded value), a call to a
function of the program that only computes (inlined first), an ``if`` nested in a
side (folded from the inside out).
"""
import numpy as np

from . import ir, operators
from .costs import integer_division, operation

SPECULATION_BUDGET = 4
"""SimplifyCFG's ``-two-entry-phi-node-folding-threshold`` (default 4, times
``TCC_Basic``): the cost of both sides together that ``foldTwoEntryPHINode`` executes
unconditionally to make a conditional a select."""

MAX_MERGED = 3
"""``foldTwoEntryPHINode`` gives up at a fourth PHI node in the block after the
conditional ("two or fewer", its comment says; its count lets three through)."""

BONUS_INSTRUCTIONS = 1
"""SimplifyCFG's ``-bonus-inst-threshold`` (default 1): instructions besides the
condition itself that ``foldBranchToCommonDest`` executes unconditionally."""

UNSAFE = (ir.Load, ir.PtrLoad, ir.Atomic, ir.Collective, ir.StmtExpr, ir.ImageRead)
"""Memory accesses, work-group functions and inlined calls (statements): never
executed on lanes that did not ask for them."""

LEAVES = (ir.Const, ir.Var, ir.WorkItem, ir.AddrOf)


def _instructions(e: ir.Expr, found: list) -> bool:
    """Append the cost of each instruction of ``e`` to ``found``; False if ``e`` may not
    run on every lane (a nested conditional that is a branch is control flow)."""
    kind = type(e)
    if kind in UNSAFE or (kind in (ir.Select, ir.Logical) and not e.speculate):
        return False
    if kind is ir.Binary and integer_division(e) and not _trapless_divisor(e.b):
        return False
    cost = operation(e) * e.type.width
    if cost:
        found.append(cost)
    return kind in LEAVES or all(_instructions(c, found) for c in ir.operands(e))


def _trapless_divisor(node) -> bool:
    """A divisor LLVM divides by speculatively: a constant, not 0, and not -1 for a
    signed division (``INT_MIN / -1`` overflows)."""
    value = _constant(node)
    if value is None:
        return False
    value = np.asarray(value)
    return bool((value != 0).all() and (not node.type.is_signed or (value != -1).all()))


def _constant(node):
    """The value of a constant with its casts applied, or None."""
    if type(node) is ir.Const:
        return node.value
    if type(node) is ir.Cast:
        inner = _constant(node.a)
        if inner is None:
            return None
        with np.errstate(all="ignore"):   # (int)1e20f is undefined: any value will do
            return operators.convert(inner, node.type)
    return None


def _within_budget(found: list) -> bool:
    # -speculate-one-expensive-inst: a side of one instruction (a division, a square
    # root) is flattened whatever that instruction costs.
    return sum(found) <= SPECULATION_BUDGET or len(found) == 1


def select(a: ir.Expr, b: ir.Expr) -> bool:
    """Whether ``c ? a : b`` is a select: both sides run on every lane."""
    found = []
    return _instructions(a, found) and _instructions(b, found) and _within_budget(found)


def logical(b: ir.Expr) -> bool:
    """Whether the right side ``b`` of ``&&``/``||`` runs on every lane."""
    found = []
    return _instructions(b, found) and len(found) <= 1 + BONUS_INSTRUCTIONS


def assignments(block: ir.Block | None):
    """The statements of ``block`` (None: no statements), nested blocks flattened."""
    for s in block.stmts if block is not None else ():
        if type(s) is ir.Block:
            yield from assignments(s)
        else:
            yield s


def merged_variables(then: ir.Block, orelse: ir.Block | None, local: set) -> tuple | None:
    """The variables an if-converted ``if`` merges with selects, as (name, components
    selected) in the order first assigned; None if the ``if`` stays a branch.

    It is if-converted when its sides hold only assignments of values that may run on
    every lane to whole variables or their components (``local`` names the variables
    declared inside the sides, which are not merged), within the budget.
    """
    found = []
    merged = {}
    for s in (*assignments(then), *assignments(orelse)):
        if type(s) is not ir.Assign or s.path or not _instructions(s.value, found):
            return None
        if s.name in local:
            continue
        comps = merged.setdefault(s.name, set())
        comps.update(range(s.value.type.width) if s.comps is None else s.comps)
    if not merged or len(merged) > MAX_MERGED or not _within_budget(found):
        return None
    return tuple((name, len(comps)) for name, comps in merged.items())
