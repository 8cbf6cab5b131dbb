"""The Command Processor: launches kernels and dispatches their work-groups to CUs.

It keeps a resource model of every CU, as MGPUSim's dispatcher does: wavefront slots
and VGPRs per SIMD, SGPRs and LDS per CU, each allocation rounded up to its granularity.
A work-group is mapped only where all of it fits; its wavefronts go to the SIMDs with
the most free slots. Dispatch is in order, round robin over the CUs, at most
``wg_dispatch_per_cycle`` work-groups per cycle (the Daisen PageRank case study knob),
after a ``launch_overhead``. It sleeps while nothing fits and wakes when a CU reports a
finished work-group or frees a slot in its input buffer. It takes the launch's
work-groups one at a time, as it dispatches them: a ``stream.WorkGroupSource`` makes
them then, so only the work-groups on the GPU and the next batch exist at once.

Written once, in Cython's pure Python mode: ``command_processor.pxd`` gives the static
types with which ``setup.py`` compiles this file; ``simulator.build`` decides whether the
compiled module or this source runs. Compiled, it subclasses the Cython engine's
component and calls the Cython tracer; run as Python, the reference engine and tracer.
"""
from array import array

import cython

if not cython.compiled:
    from ..engine.engine import TickingComponent
    from ..tracing.api import NO_TASK
    from .compute_unit import ComputeUnit, MapWG


def round_up(value, granularity):
    """``value`` rounded up to a multiple of ``granularity`` (both non-negative)."""
    return (value + granularity - 1) // granularity * granularity


def int64_array(length, value):
    """``length`` copies of ``value``, as the flat int64 array the resource model reads."""
    return array("q", [value]) * length


class CommandProcessor(TickingComponent):
    """Dispatches the work-groups of one kernel launch at a time."""

    def __init__(self, engine, name, cfg, tracer, keys, cus):
        super().__init__(engine, name)
        c = cfg["cu"]
        self.rate = cfg["cp"]["wg_dispatch_per_cycle"]
        self.launch_overhead = cfg["cp"]["launch_overhead"]
        self.cus = cus
        self.simds = c["simds"]
        self.vgpr_granularity = c["vgpr_granularity"]
        self.sgpr_granularity = c["sgpr_granularity"]
        self.lds_granularity = c["lds_granularity"]
        self.wf_slots = c["wf_slots_per_simd"]
        self.vgprs_per_simd = c["vgprs_per_simd"]
        self.sgprs = c["sgprs"]
        self.lds_bytes = c["lds_bytes"]
        n = len(cus)
        self.n_cus = n
        # free resources of each CU; per SIMD at [cu * simds + simd]
        self.free_slots = int64_array(n * self.simds, self.wf_slots)
        self.free_vgprs = int64_array(n * self.simds, self.vgprs_per_simd)
        self.free_sgprs = int64_array(n, self.sgprs)
        self.free_lds = int64_array(n, self.lds_bytes)
        # scratch copies of one CU's SIMDs while a work-group is placed
        self.try_slots = int64_array(self.simds, 0)
        self.try_vgprs = int64_array(self.simds, 0)
        for cu in cus:
            cu.cp = self
            cu.inbox.producers.append(self)
        self.source = iter(())
        self.head = None              # the next work-group to dispatch
        self.next_cu = 0
        self.dispatch_from = 0
        self.in_flight = 0
        self.dispatched = 0
        self.completed = 0
        self.kernel_task = NO_TASK
        self.kernel_done = True
        self.kernel_end = -1
        self.tracer = tracer
        self.trace_kernel = keys.kernel
        self.trace_wg = keys.wg
        self.loc = keys.loc_cp
        self.kind_map_out = keys.kind_map_out

    def launch(self, work_groups, kernel_task):
        """Start dispatching ``work_groups`` (WorkGroupStreams, taken one at a time as they
        are dispatched) after the launch overhead."""
        if not self.kernel_done:
            raise RuntimeError("a kernel is still running on the Command Processor")
        now = self.engine.now
        self.source = iter(work_groups)
        self.kernel_task = kernel_task
        self.kernel_done = False
        self.kernel_end = -1
        self.dispatched = 0
        self.completed = 0
        self.dispatch_from = now + self.launch_overhead
        self.head = self._take()
        if self.head is None:
            self._end_kernel(now)
        else:
            self.wake_at(self.dispatch_from)

    def _take(self):
        """The launch's next work-group (None after the last), checked to fit on a CU."""
        stream = next(self.source, None)
        if stream is not None and self._place(0, stream, True, True) is None:
            raise ValueError(
                f"work-group {stream.group_id} cannot fit on an empty CU: "
                f"{len(stream.wavefronts)} wavefronts, {stream.lds_bytes} B of LDS, "
                f"{stream.vgprs_per_wavefront} VGPRs and {stream.sgprs_per_wavefront} "
                "SGPRs per wavefront")
        return stream

    def _place(self, cu, stream, check_only, empty=False):
        """SIMD of each wavefront if the work-group fits on ``cu`` (reserving it unless
        ``check_only``), else None. ``empty`` checks against an idle CU."""
        n: cython.Py_ssize_t = len(stream.wavefronts)
        lds: cython.longlong = round_up(stream.lds_bytes, self.lds_granularity)
        sgprs: cython.longlong = n * round_up(stream.sgprs_per_wavefront, self.sgpr_granularity)
        vgprs: cython.longlong = round_up(stream.vgprs_per_wavefront, self.vgpr_granularity)
        s: cython.int
        best: cython.int
        _wavefront: cython.Py_ssize_t
        free_lds: cython.longlong
        free_sgprs: cython.longlong
        slots: cython.longlong[::1] = self.try_slots
        free_vgprs: cython.longlong[::1] = self.try_vgprs
        base: cython.Py_ssize_t = cu * self.simds
        for s in range(self.simds):
            slots[s] = self.wf_slots if empty else self.free_slots[base + s]
            free_vgprs[s] = self.vgprs_per_simd if empty else self.free_vgprs[base + s]
        if empty:
            free_lds, free_sgprs = self.lds_bytes, self.sgprs
        else:
            free_lds, free_sgprs = self.free_lds[cu], self.free_sgprs[cu]
        if lds > free_lds or sgprs > free_sgprs:
            return None
        simds = []
        for _wavefront in range(n):
            best = -1
            for s in range(self.simds):
                if slots[s] > 0 and free_vgprs[s] >= vgprs and (best < 0 or slots[s] > slots[best]):
                    best = s
            if best < 0:
                return None
            slots[best] -= 1
            free_vgprs[best] -= vgprs
            simds.append(best)
        if not check_only:
            for s in range(self.simds):
                self.free_slots[base + s] = slots[s]
                self.free_vgprs[base + s] = free_vgprs[s]
            self.free_lds[cu] -= lds
            self.free_sgprs[cu] -= sgprs
        return simds

    def _release(self, cu, stream, simds):
        vgprs: cython.longlong = round_up(stream.vgprs_per_wavefront, self.vgpr_granularity)
        s: cython.int
        for s in simds:
            self.free_slots[cu * self.simds + s] += 1
            self.free_vgprs[cu * self.simds + s] += vgprs
        self.free_lds[cu] += round_up(stream.lds_bytes, self.lds_granularity)
        self.free_sgprs[cu] += len(simds) * round_up(stream.sgprs_per_wavefront,
                                                     self.sgpr_granularity)
        return 0

    def tick(self, now):
        sent: cython.longlong = 0
        n: cython.int = self.n_cus
        k: cython.int
        cu: cython.int
        target: cython.int
        req_out: cython.longlong
        unit: ComputeUnit
        if now < self.dispatch_from:
            return self.dispatch_from
        while self.head is not None and sent < self.rate:
            stream = self.head
            target = -1
            simds = None
            for k in range(n):
                cu = (self.next_cu + k) % n
                unit = self.cus[cu]
                if unit.inbox.can_push():
                    simds = self._place(cu, stream, False)
                    if simds is not None:
                        target = cu
                        break
            if target < 0:
                break  # nothing fits: sleep until a work-group finishes
            self.head = self._take()
            req_out = NO_TASK
            if self.trace_wg:
                req_out = self.tracer.trace_req_initiate(self.kernel_task, self.kind_map_out,
                                                         self.loc, now)
            unit = self.cus[target]
            unit.inbox.push(MapWG(stream, simds, req_out, target))
            self.next_cu = (target + 1) % n
            self.in_flight += 1
            self.dispatched += 1
            sent += 1
        if self.head is not None and sent == self.rate:
            return now + 1
        return -1

    def receive(self, kind, arg):
        msg: MapWG = arg
        now: cython.longlong = self.engine.now
        self._release(msg.cu, msg.stream, msg.simds)
        if self.trace_wg:
            self.tracer.trace_req_finalize(msg.req_out, now)
        self.in_flight -= 1
        self.completed += 1
        if self.head is not None:
            self.wake()
        elif self.in_flight == 0:
            self._end_kernel(now)

    def _end_kernel(self, now):
        self.kernel_done = True
        self.kernel_end = now
        if self.trace_kernel:
            self.tracer.end_task(self.kernel_task, now)
        # hand control back at the exact end of the kernel, whatever ``run``'s horizon
        self.engine.stop()
        return 0
