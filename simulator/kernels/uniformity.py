"""Which values are the same for every lane: the uniformity analysis.

A GCN compiler keeps values that are identical across a wavefront in scalar
registers and computes them on the scalar ALU; everything else is per lane. We make
the same split, for two reasons: uniform values are kept as single numpy scalars by
the executor (cheap), and operations on wave-uniform values are recorded as SALU
rather than VALU instructions.

Two levels are tracked (see ``ir``): ``uniform`` (same for the whole launch) and
``wave`` (same within a wavefront; the work-group id is wave-uniform). A variable
loses a level when any assignment to it stores a value without that level or happens
under control flow without it: an ``if`` or loop on a non-uniform condition, or a
loop that some lanes leave early (``break``/``continue`` under such a condition),
after which lanes disagree about the variable. A ``return`` does not count: lanes
that returned never read anything again. The rules only ever demote, so iterating
to a fixed point terminates.
"""
from . import ir


class _Analysis:
    def __init__(self, kernel):
        self.kernel = kernel
        self.varying = set()        # variables needing one value per lane
        self.wave_varying = set()   # variables that differ between lanes of a wavefront
        self.loop_exits = {}        # id(loop/switch/call) -> (uniform, wave) of its exit sites
        self.ctx = (True, True)     # control-flow level of the statement being analysed
        self.frame_exits = []       # return sites of the inlined calls being analysed

    # -- expressions ---------------------------------------------------------------
    def expr(self, e):
        kind = type(e)
        if kind is ir.Const or kind is ir.WorkItem:
            return
        if kind is ir.Var:
            e.uniform = e.name not in self.varying
            e.wave = e.name not in self.wave_varying
            return
        if kind is ir.Atomic:
            for child in (e.ptr, e.value, e.cmp):
                if child is not None:
                    self.expr(child)
            e.uniform = e.wave = False   # each lane sees a different old value
            return
        if kind is ir.Load:
            self.expr(e.index)
            space = self.kernel.arrays[e.array].space
            e.uniform = e.index.uniform and space in ("global", "constant")
            e.wave = e.index.wave and space != "private"
            return
        if kind is ir.Collective:
            for child in e.args:
                self.expr(child)
            # Combined over a group (each lane's own for a scan): per group, so per wavefront.
            e.uniform = False
            e.wave = "_scan_" not in e.fn
            return
        if kind is ir.AddrOf:
            e.uniform = e.wave = True
            return
        if kind is ir.PtrLoad:
            self.expr(e.ptr)
            space = e.ptr.type.space
            e.uniform = e.ptr.uniform and space in ("global", "constant")
            e.wave = e.ptr.wave and space in ("global", "constant", "local")
            return
        if kind is ir.ImageRead:
            for child in (e.sampler, e.coord):
                if child is not None:
                    self.expr(child)
            e.uniform = e.coord.uniform and (e.sampler is None or e.sampler.uniform)
            e.wave = e.coord.wave and (e.sampler is None or e.sampler.wave)
            return
        if kind is ir.StmtExpr:
            self.stmt_expr(e)
            return
        if kind in (ir.Logical, ir.Select):
            self.conditional(e)
            return
        children = ir.operands(e)
        for child in children:
            self.expr(child)
        e.uniform = all(c.uniform for c in children)
        e.wave = all(c.wave for c in children)

    def conditional(self, e):
        """``a && b``, ``c ? a : b``: the later operands may run on some lanes only."""
        first = e.a if type(e) is ir.Logical else e.cond
        rest = (e.b,) if type(e) is ir.Logical else (e.a, e.b)
        self.expr(first)
        outer = self.ctx
        self.ctx = (outer[0] and first.uniform, outer[1] and first.wave)
        for child in rest:
            self.expr(child)
        self.ctx = outer
        children = (first,) + rest
        e.uniform = all(c.uniform for c in children)
        e.wave = all(c.wave for c in children)

    def stmt_expr(self, e):
        """An inlined call (or ``x++`` in an expression): its statements run in the
        caller's context; a ``return`` that some lanes take early acts like a break."""
        ctx_u, ctx_w = self.ctx
        if e.frame:
            exit_u, exit_w = self.loop_exits.get(id(e), (True, True))
            ctx_u, ctx_w = ctx_u and exit_u, ctx_w and exit_w
            self.frame_exits.append([])
        self.stmt(e.body, ctx_u, ctx_w, [])
        if e.frame:
            sites = self.frame_exits.pop()
            self.loop_exits[id(e)] = (all(s[0] for s in sites), all(s[1] for s in sites))
        self.ctx = (ctx_u, ctx_w)
        if e.result is not None:
            self.expr(e.result)
            e.uniform, e.wave = e.result.uniform, e.result.wave
        else:
            e.uniform = e.wave = True

    def exiting(self, s, test, ctx_u, ctx_w, bodies):
        """Analyse the ``bodies`` of a loop or switch ``s`` that ``test`` steers; lanes that
        leave early (break/continue) demote what follows. Returns the exit sites."""
        exit_u, exit_w = self.loop_exits.get(id(s), (True, True))
        u = ctx_u and test.uniform and exit_u
        w = ctx_w and test.wave and exit_w
        inner = []
        for body in bodies:
            self.stmt(body, u, w, inner)
        self.loop_exits[id(s)] = (all(e[0] for e in inner), all(e[1] for e in inner))
        return inner

    # -- statements ----------------------------------------------------------------
    def assign(self, name, value, ctx_u, ctx_w):
        if not (ctx_u and value.uniform):
            self.varying.add(name)
        if not (ctx_w and value.wave):
            self.wave_varying.add(name)

    def stmt(self, s, ctx_u, ctx_w, exits):
        outer = self.ctx
        self.ctx = (ctx_u, ctx_w)
        self._stmt(s, ctx_u, ctx_w, exits)
        self.ctx = outer

    def _stmt(self, s, ctx_u, ctx_w, exits):
        kind = type(s)
        if kind is ir.Block:
            for child in s.stmts:
                self.stmt(child, ctx_u, ctx_w, exits)
        elif kind is ir.Assign:
            self.expr(s.value)
            self.assign(s.name, s.value, ctx_u, ctx_w)
        elif kind is ir.Store:
            self.expr(s.index)
            self.expr(s.value)
        elif kind is ir.PtrStore:
            self.expr(s.ptr)
            self.expr(s.value)
        elif kind is ir.Printf:
            for arg in s.args:
                self.expr(arg)
        elif kind is ir.ImageWrite:
            self.expr(s.coord)
            self.expr(s.value)
        elif kind is ir.FuncReturn:
            if s.value is not None:
                self.expr(s.value)
                self.assign(s.name, s.value, ctx_u, ctx_w)
            if self.frame_exits:
                self.frame_exits[-1].append((ctx_u, ctx_w))
        elif kind is ir.Switch:
            self.expr(s.value)
            inner = self.exiting(s, s.value, ctx_u, ctx_w, [body for _, body in s.cases])
            exits.extend(inner)   # a continue in a case leaves the enclosing loop's iteration
        elif kind is ir.EmitStore:
            if s.index is not None:
                self.expr(s.index)
            self.expr(s.value)
        elif kind is ir.Eval:
            self.expr(s.expr)
        elif kind is ir.If:
            self.expr(s.cond)
            u, w = ctx_u and s.cond.uniform, ctx_w and s.cond.wave
            self.stmt(s.then, u, w, exits)
            if s.orelse is not None:
                self.stmt(s.orelse, u, w, exits)
        elif kind is ir.Loop:
            self.expr(s.cond)
            self.exiting(s, s.cond, ctx_u, ctx_w, [s.body] + ([s.step] if s.step is not None else []))
        elif kind in (ir.Break, ir.Continue):
            exits.append((ctx_u, ctx_w))


def analyze(kernel):
    """Set ``uniform``/``wave`` on every expression; store the kernel's varying variables."""
    analysis = _Analysis(kernel)
    while True:
        before = (len(analysis.varying), len(analysis.wave_varying), sorted(analysis.loop_exits.values()))
        analysis.stmt(kernel.body, True, True, [])
        after = (len(analysis.varying), len(analysis.wave_varying), sorted(analysis.loop_exits.values()))
        if after == before:
            break
    kernel.varying = analysis.varying
    kernel.wave_varying = analysis.wave_varying
