"""SIMT functional execution: run a kernel on real data, all lanes at once.

The executor walks the IR once for the whole launch. A statement runs for a set of
active lanes (``lanes.Lanes``), which plays the role of the EXEC mask, with numpy
operating on the active lanes' values:

* ``if``/``else``: both sides run, under complementary subsets of the lanes; a side
  that no lane takes is skipped (per wavefront, by construction of the records). A
  conditional a compiler turns into a select (``speculation``: a short ``?:``, an
  ``if`` that only assigns cheap values, the right side of a cheap ``&&``/``||``)
  runs its sides on every lane instead, and a select picks each lane's value;
* loops run until no lane is active; ``break``/``continue``/``return`` retire lanes
  for the rest of the loop iteration, the loop or the kernel;
* ``barrier`` needs no waiting: every lane finishes a statement before any lane
  starts the next, which is a stronger order than a barrier guarantees; a work-group
  function (``work_group_reduce_add``...) is such a barrier, whose value combines every
  lane's of the group at once (``collectives``), and a sub-group function the same over
  a wavefront;
* local memory is one array per work-group, private arrays one row per lane;
  global buffers are the host's numpy arrays, written in place;
* a pointer is a handle (see ``types``): ``PtrLoad``/``PtrStore``/``Atomic`` find the
  memory object of each lane's handle (``regions``) and record the access under that
  object's name, as ``Load``/``Store`` of a named array do;
* an inlined function call (``StmtExpr`` frame) has its own return mask: its ``return``
  retires lanes until the call ends, as ``break`` does until its loop ends;
* ``switch``: lanes enter at their case label and run on through the next cases
  until they ``break``.

While running, the executor issues instructions to an ``InstructionLog`` the way a
GCN compiler would lay them out: VALU (SALU for wave-uniform values) per operator,
VMEM per global access followed by ``WAITCNT`` before the first use of a loaded
value, LDS per local access, ``s_and_saveexec``/``s_cbranch_execz`` (SALU + BRANCH)
per branch and per loop test, ``v_cndmask`` (VALU) per component of a select,
``BARRIER``. Observations for Klein's views go to an optional ``probes.Probes``.

The executor runs the lanes of the work-groups its ``Geometry`` holds: a whole launch,
or a batch of it (``batches``, which makes the ``stream.KernelLaunch`` the timing model
consumes).
"""
import sys

import numpy as np

from ..stream import WAVEFRONT_SIZE, Unit
from . import collectives, costs, ir, operators
from . import types as T
from .atomics import atomic_update
from .builtins import MATH, apply_math
from .diagnostics import KernelError
from .formatting import c_format
from .images import image_query, read_image, write_image
from .lanes import Lanes, all_lanes
from .probes import READ, WRITE
from .regions import LaunchMemory, read_bytes, write_bytes
from .speculation import assignments

MAX_LOOP_TRIPS = 1_000_000
PRINTF_BUFFER = 1 << 20   # bytes of printf output per launch, as CL_DEVICE_PRINTF_BUFFER_SIZE


ATOMIC = 2
"""``write`` code of a global atomic in the stream (see ``simulator/stream.py``)."""


class Executor:
    """Runs one launch of one kernel (see the module docstring)."""

    def __init__(self, program, kernel, geometry, args, log, probes=None, printed=0):
        self.path = program.path
        self.kernel = kernel
        self.geo = geometry
        self.log = log
        self.probes = probes
        self.pending = False          # some wavefront has VMEM loads not yet waited for
        self.pending_waves = np.zeros(-(-geometry.lanes // WAVEFRONT_SIZE), dtype=bool)
        self.pending_vars = set()     # variables holding such loads
        self.watched = set()
        L = geometry.lanes
        self.returned = np.zeros(L, dtype=bool)
        self.fn_returned = np.zeros(L, dtype=bool)   # returned from the innermost inlined call
        self.broke = np.zeros(L, dtype=bool)
        self.continued = np.zeros(L, dtype=bool)
        self.retired = 0              # counts lanes retired by break/continue/return
        self.printed = printed        # bytes of printf output of this launch so far
        self._live_per_group = None   # per-group count of lanes that have not returned
        self._live_retired = -1
        # Line of a barrier each lane's group passed without it (0: none): such a lane
        # may still end the kernel, but not reach another barrier.
        self.skipped_barrier = np.zeros(L, dtype=np.int64)
        self.env = {}
        for name, ty in kernel.variables.items():
            shape = (ty.width,) if ty.width > 1 else ()
            if name in kernel.varying:
                self.env[name] = np.zeros((L,) + shape, dtype=ty.dtype)
            elif isinstance(ty, T.Struct) or shape:
                self.env[name] = np.zeros(shape, dtype=ty.dtype)
            else:
                self.env[name] = ty.dtype.type(0)
        self.memory = LaunchMemory(self.path, kernel, geometry, args)
        self.regions = self.memory.regions
        self.lds_bytes = self.memory.lds_bytes
        for name, value in self.memory.scalars.items():
            if name in kernel.varying:
                # A parameter the kernel reassigns per lane starts as the argument in every lane.
                self.env[name][...] = value
            else:
                self.env[name] = value

    def error(self, node, reason):
        return KernelError(self.path, node.line, node.col, reason)

    # -- running ---------------------------------------------------------------------
    def run(self):
        with np.errstate(all="ignore"):
            self.s_block(self.kernel.body, all_lanes(self.geo))
        return self

    def stmt(self, s, lanes):
        STATEMENTS[type(s)](self, s, lanes)

    def live(self, lanes):
        """``lanes`` minus those retired by break, continue or return."""
        idx = lanes.sel
        dead = self.returned[idx] | self.broke[idx] | self.continued[idx] | self.fn_returned[idx]
        return lanes.subset(~dead)

    def s_block(self, s, lanes):
        for child in s.stmts:
            if not lanes.n:
                return
            before = self.retired
            self.stmt(child, lanes)
            if self.retired != before:
                lanes = self.live(lanes)

    def wait(self, lanes):
        """``s_waitcnt vmcnt(0)``: a loaded value is about to be used by ``lanes``.

        Only the wavefronts of ``lanes`` that have loads in flight wait; the others keep
        theirs pending until they use a loaded value themselves.
        """
        if not self.pending:
            return
        waves = lanes.idx >> 6
        waiting = self.pending_waves[waves]
        if waiting.any():
            self.log.alu(lanes.subset(waiting), Unit.WAITCNT, 0)
            self.pending_waves[waves] = False
        if not self.pending_waves.any():
            self.pending = False
            self.pending_vars.clear()

    def _loads_issued(self, lanes):
        self.pending = True
        self.pending_waves[lanes.idx >> 6] = True

    def assign_var(self, name, value, lanes, comps=None, path=None):
        store = self.env[name]
        if name in self.kernel.varying:
            target = store
            for field in path or ():
                target = target[field]
            if comps is None:
                target[lanes.sel] = value
            else:
                target[_components(lanes.sel, comps)] = value
        elif comps is None and not path:
            self.env[name] = value
        else:
            store = np.array(store, copy=True)
            target = store
            for field in path or ():
                target = target[field]
            if comps is None:
                target[...] = value
            else:
                target[comps[0] if len(comps) == 1 else comps] = value
            self.env[name] = store

    def s_assign(self, s, lanes):
        value = self.eval(s.value, lanes)
        if type(s.value) in (ir.Load, ir.Atomic) and self.pending:
            self.pending_vars.add(s.name)   # the wait moves to the variable's first use
        self.assign_var(s.name, value, lanes, s.comps, s.path)

    def s_store(self, s, lanes):
        region = self.regions[s.array]
        index = self.eval(s.index, lanes)
        value = self.eval(s.value, lanes)
        self.wait_for(s.value, lanes)
        self.wait_for(s.index, lanes)
        positions, addresses = self.memory.locate(s, region, index, lanes, "write")
        if np.ndim(positions) == 0 and _per_lane(value, s.value.type):
            positions = np.broadcast_to(positions, (lanes.n,))   # many lanes, one location: the last wins
        if s.comps is not None:
            region.data[_components(positions, s.comps)] = value
        else:
            region.data[positions] = value
        self.memory_record(s, region, lanes, addresses, index, True)

    def wait_for(self, node, lanes):
        if self.pending and type(node) is ir.Load:
            self.wait(lanes)

    def s_emit(self, s, lanes):
        value = self.eval(s.value, lanes)
        self.wait_for(s.value, lanes)
        if s.index is None:
            index = self.geo.lane_array("global_linear", 0)[lanes.sel]
        else:
            index = np.broadcast_to(self.eval(s.index, lanes), (lanes.n,))
        value = np.broadcast_to(value, (lanes.n,))
        keep = (index >= 0) & (index < self.kernel.emits[s.name].length)
        if self.probes is not None:
            self.probes.emit(s.name, index[keep], value[keep])

    def branch_test(self, s, cond, lanes, node):
        """Issue the EXEC-mask update and branch of a conditional; record branch bits of
        Klein's branch node ``node`` (None: a ``?:``, which has none)."""
        if np.ndim(cond) == 0:
            self.log.alu(lanes, Unit.BRANCH, s.line)
        else:
            self.log.alu(lanes, Unit.SALU, s.line)
            self.log.alu(lanes, Unit.BRANCH, s.line)
        if self.probes is not None and node is not None:
            self.probes.branch(node, lanes, cond)

    def split(self, cond, lanes):
        if np.ndim(cond) == 0:
            empty = Lanes(np.empty(0, dtype=np.int64), lanes.total)
            return (lanes, empty) if cond else (empty, lanes)
        taken = cond != 0
        return lanes.subset(taken), lanes.subset(~taken)

    def branch(self, s, cond, lanes, node, run_then, run_else):
        """A conditional left as a branch: its EXEC-mask code, with ``run_then`` and
        ``run_else`` (None: no else side) each called with the lanes of its side, if any."""
        self.branch_test(s, cond, lanes, node)
        then_lanes, else_lanes = self.split(cond, lanes)
        if then_lanes.n:
            run_then(then_lanes)
        if run_else is not None:
            if np.ndim(cond):  # divergent: flip EXEC to the else lanes, skip if none remain
                self.log.alu(lanes, Unit.SALU, s.line)
                self.log.alu(lanes, Unit.BRANCH, s.line)
            elif then_lanes.n:  # uniform and taken: a scalar branch jumps over the else side
                self.log.alu(lanes, Unit.BRANCH, s.line)
            if else_lanes.n:
                run_else(else_lanes)
        if np.ndim(cond):
            self.log.alu(lanes, Unit.SALU, s.line)  # restore EXEC after the divergent region

    def s_if(self, s, lanes):
        cond = self.eval(s.cond, lanes)
        self.wait_for(s.cond, lanes)
        if s.merged is not None:
            self.if_converted(s, cond, lanes)
            return
        self.branch(s, cond, lanes, s.node, lambda sub: self.stmt(s.then, sub),
                    None if s.orelse is None else lambda sub: self.stmt(s.orelse, sub))

    def if_converted(self, s, cond, lanes):
        """Both sides' assignments computed on every lane, each variable set on its
        side's lanes; then one select per merged component (no branch, no branch bits)."""
        sides = self.split(cond, lanes)
        picks = (cond != 0, cond == 0) if np.ndim(cond) else (None, None)
        for body, side, pick in zip((s.then, s.orelse), sides, picks):
            for a in assignments(body):
                value = self.eval(a.value, lanes)
                if not side.n:
                    continue
                if pick is not None and _per_lane(value, a.value.type):
                    value = value[pick]
                self.assign_var(a.name, value, side, a.comps, a.path)
        for name, count in s.merged:
            scalar = name not in self.kernel.wave_varying and not self.kernel.variables[name].is_float
            self.log.alu(lanes, Unit.SALU if scalar else Unit.VALU, s.line, count)

    def s_loop(self, s, lanes):
        outer = self.broke.copy(), self.continued.copy()
        self.broke[:] = False
        self.continued[:] = False
        active = lanes
        first = True
        trips = 0
        while True:
            if not (s.post and first):
                cond = self.eval(s.cond, active)
                self.wait_for(s.cond, active)
                self.branch_test(s, cond, active, s.node)
                active = self.split(cond, active)[0]
            first = False
            if not active.n:
                break
            trips += 1
            if trips > MAX_LOOP_TRIPS:
                raise self.error(s, f"loop did not finish after {MAX_LOOP_TRIPS} iterations")
            self.stmt(s.body, active)
            self.continued[active.sel] = False
            active = self.live(active)
            if s.step is not None and active.n:
                self.stmt(s.step, active)
        self.broke, self.continued = outer

    def s_break(self, s, lanes):
        self.broke[lanes.sel] = True
        self.retired += 1

    def s_continue(self, s, lanes):
        self.continued[lanes.sel] = True
        self.retired += 1

    def s_return(self, s, lanes):
        self.returned[lanes.sel] = True
        self.retired += 1

    def s_barrier(self, s, lanes):
        self.group_barrier(s, lanes)

    def group_barrier(self, node, lanes):
        """``lanes`` pass a work-group barrier: ``barrier`` or a work-group function."""
        self.check_barrier(node, lanes)
        self.wait(lanes)
        self.log.alu(lanes, Unit.BARRIER, node.line)
        if self.probes is not None:
            self.probes.barrier(node.line, lanes, bool(self.watched))

    def check_barrier(self, s, lanes):
        """The work-items of a group that reach a barrier must be the same at every
        barrier, but for those that return or end the kernel on the way.

        OpenCL leaves a barrier in divergent control flow undefined; on a GPU a barrier
        counts the work-items (waves) still running, so one that skips a barrier under an
        ``if`` and then ends releases it, as the suites' kernels rely on (Rodinia's
        streamcluster, SHOC's SpMV: ``if (row < n) { ... barrier ... }`` on a launch
        rounded up). One that skipped a barrier and reaches another would pair the two
        (a barrier in a loop some leave early, and another after it): that is an error
        naming the group and the barrier skipped.
        """
        geo = self.geo
        late = self.skipped_barrier[lanes.idx]
        if late.any():
            lane = int(lanes.idx[np.flatnonzero(late)[0]])
            g = lane // geo.slots_per_group
            raise self.error(s, f"work-items of work-group {geo.group_ids(g)[:geo.dims]} reach"
                             f" this barrier after skipping the one at line {late.max()} that"
                             " the rest of their group passed: a barrier in divergent control"
                             " flow is undefined")
        present = np.bincount(lanes.idx // geo.slots_per_group, minlength=geo.groups)
        if self._live_per_group is None or self.retired != self._live_retired:
            alive = geo.valid & ~self.returned
            self._live_per_group = np.bincount(np.flatnonzero(alive) // geo.slots_per_group,
                                               minlength=geo.groups)
            self._live_retired = self.retired
        short = np.flatnonzero((present > 0) & (present < self._live_per_group))
        if len(short):
            missing = geo.valid & ~self.returned & np.isin(
                np.arange(len(geo.valid)) // geo.slots_per_group, short)
            missing[lanes.idx] = False
            self.skipped_barrier[missing] = s.line

    def s_switch(self, s, lanes):
        value = self.eval(s.value, lanes)
        self.wait_for(s.value, lanes)
        count = len(s.cases)
        default = next((k for k, (v, _) in enumerate(s.cases) if v is None), count)
        entry = np.full(np.shape(value), default, dtype=np.int64)
        for k in range(count - 1, -1, -1):
            if s.cases[k][0] is not None:
                entry = np.where(value == s.cases[k][0], k, entry)
        outer = self.broke.copy()
        self.broke[:] = False
        waiting, running = lanes, Lanes(np.empty(0, dtype=np.int64), lanes.total)
        for k, (_, body) in enumerate(s.cases):
            if waiting.n:
                mine = (entry == k if np.ndim(entry) == 0
                        else entry[np.searchsorted(lanes.idx, waiting.idx)] == k)
                self.branch_test(s, mine, waiting, s.nodes[k])
                entering, waiting = self.split(mine, waiting)
                if entering.n:
                    running = Lanes(np.union1d(running.idx, entering.idx), lanes.total)
            running = self.live(running)
            if running.n and body.stmts:
                self.stmt(body, running)
        self.broke = outer

    def s_funcreturn(self, s, lanes):
        if s.name is not None:
            value = self.eval(s.value, lanes)
            self.wait_for(s.value, lanes)
            self.assign_var(s.name, value, lanes)
        self.fn_returned[lanes.sel] = True
        self.retired += 1

    def s_ptrstore(self, s, lanes):
        handles = self.eval(s.ptr, lanes)
        value = self.eval(s.value, lanes)
        self.wait_for(s.value, lanes)
        self.wait_for(s.ptr, lanes)
        ty = s.ptr.type.elem
        per_lane = _per_lane(value, s.value.type)
        for mask, region, positions, offsets in self.memory.resolve(s, handles, ty, lanes, "write"):
            if region.space == "constant":
                raise self.error(s, f"write to constant memory '{region.owner}'")
            part = value[mask] if mask is not None and per_lane else value
            if np.ndim(positions) == 0 and per_lane:
                positions = np.broadcast_to(positions, (np.shape(part)[0],))
            if s.comps is not None:
                current = np.array(read_bytes(region, positions, ty), copy=True)
                current[..., s.comps[0] if len(s.comps) == 1 else s.comps] = part
                part = current
            write_bytes(region, positions, ty, part)
            self.pointer_record(s, region, lanes if mask is None else lanes.subset(mask), offsets, True)

    def s_imagewrite(self, s, lanes):
        coord = self.eval(s.coord, lanes)
        value = self.eval(s.value, lanes)
        self.wait_for(s.value, lanes)
        region = self.regions[s.image]
        addresses = write_image(region, coord, value, lanes.n)
        self.log.vmem(lanes, s.line, 1, addresses, region.data.itemsize)

    def s_printf(self, s, lanes):
        values = [np.broadcast_to(np.asarray(self.eval(a, lanes)),
                                  (lanes.n,) + ((a.type.width,) if a.type.width > 1 else ()))
                  for a in s.args]
        self.log.alu(lanes, Unit.VALU, s.line)
        for k in range(lanes.n):
            if self.printed >= PRINTF_BUFFER:
                return
            text = c_format(s.format, [v[k] for v in values])
            self.printed += len(text)
            sys.stdout.write(text if self.printed <= PRINTF_BUFFER else
                             text[:PRINTF_BUFFER - self.printed] + "\n[printf buffer full]\n")

    def s_watch(self, s, lanes):
        self.watched.add(s.array.split("#")[0])

    def s_eval(self, s, lanes):
        self.eval(s.expr, lanes)

    # -- expressions -------------------------------------------------------------------
    def eval(self, e, lanes):
        return EXPRESSIONS[type(e)](self, e, lanes)

    def alu(self, e, lanes, count=1):
        # Wave-uniform integer work goes to the scalar unit; GCN's SALU has no floating
        # point, so uniform float arithmetic still takes a vector instruction.
        scalar = e.wave and not e.type.is_float
        self.log.alu(lanes, Unit.SALU if scalar else Unit.VALU, e.line, count * e.type.width)

    def operands(self, e, lanes, *children):
        values = [self.eval(c, lanes) for c in children]
        if self.pending and any(type(c) is ir.Load for c in children):
            self.wait(lanes)
        return values

    def e_const(self, e, lanes):
        return e.value

    def e_var(self, e, lanes):
        if e.name in self.pending_vars:
            self.wait(lanes)
        value = self.env[e.name]
        if e.name in self.kernel.varying:
            return value[lanes.sel]
        return value

    def e_workitem(self, e, lanes):
        if e.uniform:
            return self.geo.uniform_value(e.fn, e.dim)
        if e.fn == "get_global_id":
            self.log.alu(lanes, Unit.VALU, e.line)   # group * size + local id
        return self.geo.lane_array(e.fn, e.dim)[lanes.sel]

    def e_binary(self, e, lanes):
        a, b = self.operands(e, lanes, e.a, e.b)
        a, b = _widen((a, e.a.type), (b, e.b.type))
        self.alu(e, lanes, costs.operation(e))
        return operators.binary(e.op, a, b, e.a.type, e.type)

    def e_logical(self, e, lanes):
        a = self.eval(e.a, lanes)
        if self.pending and type(e.a) is ir.Load:
            self.wait(lanes)
        first = operators.truth(a)
        if e.speculate:
            return self.logical_combined(e, first, lanes)
        self.alu(e, lanes)
        if np.ndim(first) == 0:
            if bool(first) == (e.op == "||"):
                return np.int32(1 if first else 0)
            b = self.eval(e.b, lanes)
            return operators.as_type(operators.truth(b), T.INT)
        # The right side runs only where it decides the result (C short-circuit).
        need = ~first if e.op == "||" else first
        result = first.copy() if e.op == "||" else np.zeros(lanes.n, dtype=bool)
        sub = lanes.subset(need)
        if sub.n:
            b = self.eval(e.b, sub)
            if self.pending and type(e.b) is ir.Load:
                self.wait(sub)
            result[need] = np.broadcast_to(operators.truth(b), (sub.n,))
        return result.astype(np.int32)

    def logical_combined(self, e, first, lanes):
        """``&&``/``||`` whose right side runs on every lane: both truth values combined
        by one instruction (``s_and``/``s_or`` of the lane masks, or ``v_and``/``v_or``)."""
        second = operators.truth(self.eval(e.b, lanes))
        self.alu(e, lanes)
        if np.ndim(first) == 0:
            if bool(first) == (e.op == "||"):
                return np.int32(1 if first else 0)
            return operators.as_type(second, T.INT)
        combined = (first | second) if e.op == "||" else (first & second)
        return np.broadcast_to(combined, (lanes.n,)).astype(np.int32)

    def e_unary(self, e, lanes):
        (a,) = self.operands(e, lanes, e.a)
        self.alu(e, lanes)
        return operators.unary(e.op, a, e.type)

    def e_cast(self, e, lanes):
        (a,) = self.operands(e, lanes, e.a)
        src, dst = e.a.type, e.type
        if isinstance(dst, (T.Pointer, T.Struct, T.Opaque)):
            return a   # a pointer handle retyped (or a struct copied): no instruction
        if costs.converts(src, dst):
            self.alu(e, lanes)
        if dst.width > 1 and src.width == 1:
            a = np.repeat(np.asarray(a)[..., None], dst.width, axis=-1)
        return operators.convert(a, dst)

    def e_select(self, e, lanes):
        cond = self.eval(e.cond, lanes)
        if self.pending and type(e.cond) is ir.Load:
            self.wait(lanes)
        taken = operators.truth(cond)
        shape = (lanes.n,) + ((e.type.width,) if e.type.width > 1 else ())
        if e.speculate:
            a, b = self.eval(e.a, lanes), self.eval(e.b, lanes)
            self.alu(e, lanes)   # v_cndmask_b32 per component
            if np.ndim(cond) == 0:
                return a if taken else b
            out = np.empty(shape, dtype=e.type.dtype)
            out[...] = b
            out[taken] = a[taken] if _per_lane(a, e.type) else a
            return out
        values = {}

        def side(part, key):
            def run(sub):
                values[key] = self.eval(part, sub)
                if self.pending and type(part) is ir.Load:
                    self.wait(sub)
            return run

        self.branch(e, cond, lanes, None, side(e.a, True), side(e.b, False))
        if np.ndim(cond) == 0:
            return values[bool(taken)]
        out = np.zeros(shape, dtype=e.type.dtype)
        for key, where in ((True, taken), (False, ~taken)):
            if key in values:
                out[where] = values[key]
        return out

    def e_call(self, e, lanes):
        args = self.operands(e, lanes, *e.args)
        if e.fn.startswith("get_image"):
            return image_query(self.memory.by_id[int(args[0]) >> 40], e.fn)
        self.alu(e, lanes, costs.operation(e))
        if e.fn == "as":
            return operators.reinterpret(args[0], e.args[0].type, e.type)
        if e.fn.startswith("convert_"):
            return operators.convert(args[0], e.type, saturate="sat" in e.fn, rounding=e.fn)
        if len(args) > 1:
            args = _widen(*zip(args, (a.type for a in e.args)))
        result = apply_math(e.fn, args)
        if e.type.width > 1 and MATH[e.fn][0].startswith("relational"):
            result = np.where(result, -1, 0)   # vector comparisons give -1 for true
        return operators.as_type(result, e.type)

    def e_collective(self, e, lanes):
        """A work-group or sub-group function (see ``collectives``). Every work-item of a
        group that calls it must call it together: a work-group one is a barrier too, and
        a sub-group (a wavefront) runs in lockstep, so it needs none."""
        values = self.operands(e, lanes, *e.args)
        scope, kind, op = collectives.split(e.fn)
        size = collectives.group_size(scope, self.geo)
        if scope == "work_group":
            self.group_barrier(e, lanes)
        self.check_whole_groups(e, lanes, scope, size)
        self.log.alu(lanes, Unit.VALU, e.line, collectives.WAVE_STEPS)
        targets = None
        if kind == "broadcast":
            try:
                targets = collectives.broadcast_columns(scope, values[1:], lanes.idx, self.geo)
            except ValueError as exc:
                raise self.error(e, f"{e.fn}: {exc}") from None
        return collectives.combine(kind, op, values[0], lanes.idx, size, targets)

    def check_whole_groups(self, e, lanes, scope, size):
        """Each work-group (or sub-group) that has work-items in ``lanes`` has all of them
        there: OpenCL leaves a work-group or sub-group function that some skip undefined."""
        geo = self.geo
        present = np.bincount(lanes.idx // size, minlength=geo.lanes // size)
        members = np.bincount(np.flatnonzero(geo.valid) // size, minlength=geo.lanes // size)
        short = np.flatnonzero((present > 0) & (present < members))
        if len(short):
            k = int(short[0])
            group = k * size // geo.slots_per_group
            where = f"work-group {geo.group_ids(group)[:geo.dims]}"
            if scope == "sub_group":
                where = f"sub-group {k % geo.waves_per_group} of {where}"
            raise self.error(e, f"{e.fn} is reached by {present[k]} of the {members[k]} work-items of"
                                f" {where}: all of them must reach it")

    def e_addrof(self, e, lanes):
        return self.memory.handle(e.array)

    def e_ptrload(self, e, lanes):
        handles = self.eval(e.ptr, lanes)
        self.wait_for(e.ptr, lanes)
        parts = self.memory.resolve(e, handles, e.type, lanes, "read")
        if len(parts) == 1:
            mask, region, positions, offsets = parts[0]
            self.pointer_record(e, region, lanes, offsets, False)
            return read_bytes(region, positions, e.type)
        shape = (lanes.n,) + ((e.type.width,) if e.type.width > 1 else ())
        out = np.zeros(shape, dtype=e.type.dtype)
        for mask, region, positions, offsets in parts:
            out[mask] = read_bytes(region, positions, e.type)
            self.pointer_record(e, region, lanes.subset(mask), offsets, False)
        return out

    def e_member(self, e, lanes):
        value = np.asarray(self.eval(e.a, lanes))[e.field]
        return value[()] if value.ndim == 0 else value

    def e_stmtexpr(self, e, lanes):
        if e.frame:
            outer = self.fn_returned
            self.fn_returned = np.zeros_like(outer)
            self.s_block(e.body, lanes)
            self.fn_returned = outer
        else:
            self.s_block(e.body, lanes)
        return self.eval(e.result, lanes) if e.result is not None else None

    def e_imageread(self, e, lanes):
        coord = self.eval(e.coord, lanes)
        flags = int(self.eval(e.sampler, lanes)) if e.sampler is not None else 0
        self.alu(e, lanes)
        region = self.regions[e.image]
        value, addresses = read_image(region, coord, flags, e.type, lanes.n)
        self.log.vmem(lanes, e.line, 0, addresses, region.data.itemsize)
        self._loads_issued(lanes)
        return value

    def e_swizzle(self, e, lanes):
        a = self.eval(e.a, lanes)
        if self.pending and type(e.a) is ir.Load:
            self.wait(lanes)
        comps = e.comps[0] if len(e.comps) == 1 else e.comps
        return np.asarray(a)[..., comps]

    def e_veclit(self, e, lanes):
        parts = self.operands(e, lanes, *e.parts)
        columns = []
        for part, node in zip(parts, e.parts):
            part = np.asarray(part)
            if node.type.width == 1:
                columns.append(part)
            else:
                columns.extend(part[..., k] for k in range(node.type.width))
        if all(c.ndim == 0 for c in columns):
            return np.array(columns, dtype=e.type.dtype)
        return np.stack([np.broadcast_to(c, (lanes.n,)) for c in columns], axis=-1).astype(e.type.dtype)

    def e_atomic(self, e, lanes):
        handles = self.eval(e.ptr, lanes)
        value = self.eval(e.value, lanes) if e.value is not None else e.type.dtype.type(1)
        cmp = self.eval(e.cmp, lanes) if e.cmp is not None else None
        if self.pending and any(type(c) is ir.Load for c in (e.ptr, e.value, e.cmp)):
            self.wait(lanes)
        old = np.empty(lanes.n, dtype=e.type.dtype)
        values = np.broadcast_to(np.asarray(value, dtype=e.type.dtype), (lanes.n,))
        cmps = np.broadcast_to(np.asarray(cmp, dtype=e.type.dtype), (lanes.n,)) if cmp is not None else None
        resolved = self.memory.resolve(e, handles, e.type, lanes, "atomic update")
        for mask, region, positions, offsets in resolved:
            sub = lanes if mask is None else lanes.subset(mask)
            if np.any(np.asarray(positions) % e.type.size):
                raise self.error(e, "atomic update of a misaligned location")
            where = slice(None) if mask is None else mask
            index = np.broadcast_to(np.asarray(positions) // e.type.size, (sub.n,))
            old[where] = atomic_update(region.view(e.type.dtype), index, values[where], e.op,
                                       cmps[where] if cmps is not None else None)
            # An atomic travels as a write whose old value comes back like a load (write=2).
            self.pointer_record(e, region, sub, offsets, ATOMIC)
            if region.space != "local":
                self._loads_issued(sub)
        return old

    def e_load(self, e, lanes):
        region = self.regions[e.array]
        index = self.eval(e.index, lanes)
        if self.pending and type(e.index) is ir.Load:
            self.wait(lanes)
        positions, addresses = self.memory.locate(e, region, index, lanes, "read")
        value = region.data[positions]
        self.memory_record(e, region, lanes, addresses, index, False)
        return value

    # -- memory ------------------------------------------------------------------------
    def memory_record(self, node, region, lanes, addresses, index, write):
        size = region.elem.size
        if region.space in ("global", "constant"):
            self.log.vmem(lanes, node.line, int(write), addresses, size)
            if not write:
                self._loads_issued(lanes)
        elif region.space == "local":
            self.log.lds(lanes, node.line, int(bool(write)), addresses, size)
        else:
            self.log.alu(lanes, Unit.VALU, node.line)  # private arrays live in registers
        if self.probes is not None and region.owner in self.watched:
            self.probes.access(WRITE if write else READ, node.line, lanes, region.owner,
                               np.asarray(index) * region.scale, addresses, region.space == "local")


    def pointer_record(self, node, region, lanes, offsets, write):
        """Record an access through a pointer like one to ``region[element]``."""
        element = np.asarray(offsets) // max(1, T.storage_size(region.elem))
        self.memory_record(node, region, lanes, region.base + np.asarray(offsets), element, write)


def _per_lane(value, ty):
    """Does ``value`` hold one entry per lane (rather than one for all)?"""
    return np.ndim(value) > (1 if ty.width > 1 else 0)


def _components(rows, comps):
    """Index of components ``comps`` of ``rows`` (a slice, index array or single index)
    in an (n, width) array: one row per lane, each lane's own components."""
    if len(comps) == 1:
        return rows, comps[0]
    if isinstance(rows, slice) or np.ndim(rows) == 0:
        return rows, comps
    return np.ix_(rows, comps)


# The executor's handler of each IR node type (class-level: an executor holding its own
# bound methods would be a reference cycle, and its arrays would wait for the cyclic GC).
STATEMENTS = {ir.Block: Executor.s_block, ir.Assign: Executor.s_assign, ir.Store: Executor.s_store,
              ir.EmitStore: Executor.s_emit, ir.If: Executor.s_if, ir.Loop: Executor.s_loop,
              ir.Break: Executor.s_break, ir.Continue: Executor.s_continue,
              ir.Return: Executor.s_return, ir.Barrier: Executor.s_barrier,
              ir.Watch: Executor.s_watch, ir.Eval: Executor.s_eval, ir.PtrStore: Executor.s_ptrstore,
              ir.FuncReturn: Executor.s_funcreturn, ir.Switch: Executor.s_switch,
              ir.ImageWrite: Executor.s_imagewrite, ir.Printf: Executor.s_printf}
EXPRESSIONS = {ir.Const: Executor.e_const, ir.Var: Executor.e_var, ir.WorkItem: Executor.e_workitem,
               ir.Binary: Executor.e_binary, ir.Logical: Executor.e_logical, ir.Unary: Executor.e_unary,
               ir.Cast: Executor.e_cast, ir.Select: Executor.e_select, ir.Call: Executor.e_call,
               ir.Collective: Executor.e_collective,
               ir.Load: Executor.e_load, ir.Swizzle: Executor.e_swizzle, ir.VecLit: Executor.e_veclit,
               ir.Atomic: Executor.e_atomic, ir.AddrOf: Executor.e_addrof, ir.PtrLoad: Executor.e_ptrload,
               ir.Member: Executor.e_member, ir.StmtExpr: Executor.e_stmtexpr,
               ir.ImageRead: Executor.e_imageread}


def _widen(*typed):
    """Operands ready to combine: per-lane scalars get a trailing axis next to vectors.

    ``typed`` holds (value, type) pairs; the type tells a per-lane scalar (shape
    (n,)) from a launch-uniform vector (shape (width,)).
    """
    if all(ty.width == 1 for _, ty in typed):
        return tuple(v for v, _ in typed)
    return tuple(v[:, None] if ty.width == 1 and np.ndim(v) == 1 else v for v, ty in typed)


def vgpr_estimate(kernel):
    """VGPRs per lane a GCN compiler would allocate, roughly.

    One 32-bit register per dword of each per-lane variable (a float4 takes four, a
    double or a pointer two, a struct its size), plus a few for temporaries and the
    work-item ids; only the CU's occupancy limit depends on it.
    """
    per_lane = sum(max(ty.width, -(-ty.size // 4)) for name, ty in kernel.variables.items()
                   if name in kernel.varying)
    return min(256, max(8, per_lane + 6))
