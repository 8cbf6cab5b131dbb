"""Findings: what the analyses of one launch say, each with the time it explains.

A finding is ``{"rule", "kernel", "explains_ps", "message", "evidence"}``. Its message
states the numbers, the definition and the threshold (why-layer.md §9, rule R1); its
evidence lists the views that show it, as the query parameters of the app's pages:

- ``{"view": "overview", "filter", "t0", "t1"}``: the Overview filtered to the components;
- ``{"view": "component", "loc", "t0", "t1"}``: one component's tasks in the window;
- ``{"view": "task", "loc", "task", "t0", "t1"}``: a task (the one behind the finding);
- ``{"view": "kernel", "launch", "line"}``: the kernel page at a source line.

A finding without evidence is not shown (rule R4), and analyses that are breakdowns
(S2, S3 below its threshold) give none. ``explains_ps`` is launch time: time a unit or
the CUs on average spent on what the finding names, so findings of one launch and of
different launches rank on one scale.
"""
from __future__ import annotations

from .thresholds import Thresholds

CP = "GPU.CommandProcessor"
BANDWIDTH_KEYS = {"DRAM": "dram.bytes_per_cycle", "MALL": "mall.requests_per_cycle",
                  "L2": "l2.requests_per_cycle", "L1V": "cu.vmem_lines_per_cycle"}
"""The configuration key that sets each memory level's peak (S7's denominators)."""
CUS = r"CU\[\d+\]$"


def _us(ps: int) -> str:
    return f"{ps / 1e6:.3f} µs"


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "–"


def _finding(rule: str, kernel: int, explains: int, message: str, evidence: list[dict],
             key: str | None = None) -> dict:
    """A finding; ``key`` is the configuration key a what-if would vary (kept out of the
    report: ``public``)."""
    found = {"rule": rule, "kernel": kernel, "explains_ps": int(explains), "message": message,
             "evidence": evidence}
    return {**found, "key": key} if key else found


def public(finding: dict) -> dict:
    """The finding as the report shows it."""
    return {k: v for k, v in finding.items() if k != "key"}


def budget_findings(kernel: int, budget: dict, t: Thresholds, last_group: dict | None) -> list[dict]:
    """Launch overhead and tail (S1)."""
    out = []
    start, first, *_, tail, end = budget["boundaries_ps"]
    window = budget["window_ps"][1] - budget["window_ps"][0]
    if budget["launch_ps"] and budget["launch_ps"] >= t.launch_share * window:
        out.append(_finding(
            "time-budget", kernel, budget["launch_ps"],
            f"launch overhead: {_us(budget['launch_ps'])} ({_share(budget['launch_ps'], window)}"
            " of the launch) pass between the kernel's start and its first dispatch (cp.launch_"
            f"overhead). Definition: S1 launch phase; threshold: {t.launch_share:.0%} of the launch.",
            [{"view": "component", "loc": CP, "t0": start, "t1": first}], "cp.launch_overhead"))
    idle = budget["tail_idle_ps"]
    if idle and idle >= t.tail_share * window:
        evidence = [{"view": "overview", "filter": CUS, "t0": tail, "t1": end}]
        if last_group:
            evidence.append({"view": "task", **last_group, "t0": tail, "t1": end})
        waves = budget["waves_per_cu"]
        out.append(_finding(
            "time-budget", kernel, idle,
            f"tail: for the last {_us(budget['tail_ps'])} fewer than {t.tail_frac:.0%} of the"
            f" {budget['peak_busy_cus']} busy CUs hold a work-group, idling {_us(idle)} of"
            f" launch time; {waves} waves per CU ({budget['flag'] or 'several waves'})."
            f" Definition: S1 tail phase, idle CU-time ÷ peak busy CUs; threshold:"
            f" {t.tail_share:.0%} of the launch.", evidence))
    return out


def idle_findings(kernel: int, idle: dict, t: Thresholds, window: tuple[int, int],
                  dispatch_window: tuple[int, int]) -> list[dict]:
    """Dispatch-bound time and CU idle classes (S10)."""
    out = []
    width = window[1] - window[0]
    bound = idle["dispatch_bound_ps"]
    if bound and bound >= t.dispatch_share * width:
        resident = idle["wavefronts_per_cu_when_bound"]
        held = "" if resident is None else (
            f"; the CUs held {resident} of their {idle['wavefront_slots_per_cu']} wavefront"
            " slots on average then")
        out.append(_finding(
            "cu-idle", kernel, bound,
            f"dispatch-bound: for {_us(bound)} ({_share(bound, width)} of the launch)"
            " work-groups were still to be dispatched while CUs had room for them: the"
            f" Command Processor's {idle['dispatch_rate']} per cycle"
            f" (cp.wg_dispatch_per_cycle), not the CUs' resources, set the pace{held}."
            " Definition: S10, time with work-groups undispatched and fewer resident than"
            " the CUs hold at most; threshold:"
            f" {t.dispatch_share:.0%} of the launch.",
            [{"view": "overview", "filter": f"CommandProcessor|{CUS}",
              "t0": dispatch_window[0], "t1": dispatch_window[1]},
             {"view": "component", "loc": CP, "t0": dispatch_window[0], "t1": dispatch_window[1]}],
            "cp.wg_dispatch_per_cycle"))
    for name, what in (("dispatch_starved", "work-groups were still to be dispatched"),
                       ("tail", "every work-group was dispatched but the CU would run more")):
        ps = idle[f"{name}_ps"]
        if ps and ps >= t.idle_share * idle["cu_time_ps"]:
            out.append(_finding(
                "cu-idle", kernel, ps // idle["cus"],
                f"CUs idle, {name.replace('_', '-')}: {_share(ps, idle['cu_time_ps'])} of CU-time"
                f" ({_us(ps // idle['cus'])} per CU) with no work-group resident while {what}."
                f" Definition: S10; threshold: {t.idle_share:.0%} of CU-time.",
                [{"view": "overview", "filter": CUS, "t0": window[0], "t1": window[1]}]))
    return out


def sol_findings(kernel: int, sol: dict, t: Thresholds, span: tuple[int, int],
                 busiest_loc: str | None) -> list[dict]:
    """The launch's classification (S7): bound or heavier, naming the unit."""
    c = sol["classification"]
    units = sol["units"]
    if c["kind"] in ("latency-bound", "balanced"):
        return []
    unit = c["unit"] or max((u for u in units if u != "dispatch"), key=lambda u: units[u]["sol"])
    share = units[unit]["sol"]
    explains = round(share * (span[1] - span[0]))
    evidence = [{"view": "overview", "filter": unit.replace("VALU", "SIMD"), "t0": span[0], "t1": span[1]}]
    if busiest_loc:
        evidence.append({"view": "component", "loc": busiest_loc, "t0": span[0], "t1": span[1]})
    return [_finding(
        "speed-of-light", kernel, explains,
        f"{c['kind']}: {unit} at {share:.0%} of its peak (busiest {units[unit]['busiest']} at"
        f" {units[unit]['busiest_sol']:.0%}); compute {sol['compute_sol']:.0%}, memory"
        f" {sol['memory_sol']:.0%}; busiest memory level {c['busiest_memory']}."
        f" Definition: S7, Nsight Compute's SOL rule; thresholds: bound {t.sol_bound:.0%},"
        f" latency {t.sol_latency:.0%}, gap {t.sol_gap:.0%}.", evidence, BANDWIDTH_KEYS.get(unit))]


def stall_findings(kernel: int, stalls: dict, t: Thresholds, window: tuple[int, int]) -> list[dict]:
    """Issue-limited wavefronts (S3)."""
    total = stalls["wavefront_time_ps"]
    ps = stalls["charged_ps"]["not_issued"]
    if not total or ps <= t.not_issued * total:
        return []
    return [_finding(
        "stalls", kernel, ps * (window[1] - window[0]) // total,
        f"issue-limited: wavefronts were ready but not issued {_share(ps, total)} of their time"
        f" (unit busy, not selected, or vector-memory queue full). Definition: S3 not_issued;"
        f" threshold: {t.not_issued:.0%}.",
        [{"view": "overview", "filter": r"WFPool|SIMD", "t0": window[0], "t1": window[1]}])]


def hint_findings(kernel: int, hints: dict, t: Thresholds) -> list[dict]:
    """Divergence and bank-conflict hints (S12), each pointing at the kernel page."""
    out = []
    for hint in hints["hints"]:
        if hint["hint"] == "divergence":
            message = (f"divergence: {hints['divergent_wavefronts']:.0%} of wavefronts took more"
                       f" than one branch path; SIMD efficiency {hints['simd_efficiency']:.0%}."
                       f" Definition: S12; threshold: {t.divergent_wavefronts:.0%} of wavefronts.")
        else:
            message = (f"LDS bank conflicts: {hints['lds_conflict_rate']:.0%} of LDS instructions"
                       f" conflict, worst degree {hints['lds_max_degree']}. Definition: S12;"
                       f" thresholds: rate {t.lds_conflict_rate:.0%} or degree {t.lds_degree}.")
        out.append(_finding("kernel-hints", kernel, hint["cost_ps"] or 0, message,
                            [{"view": "kernel", "launch": hints["launch"], "line": hint["line"]}]))
    return out


def critical_path_findings(kernel: int, path: dict, t: Thresholds) -> list[dict]:
    """The class that dominates the launch's critical path (S9), naming the task on it
    charged most."""
    total = path["total_ps"]
    cls, ps = max(path["by_class"].items(), key=lambda item: item[1])
    task = path["critical_task"]
    if not total or task is None or ps < t.critical_share * total:
        return []
    # the path's most expensive component: a breakdown's whole class would restate
    # every other finding's cause and outrank them all
    top = path["by_component"][0]
    return [_finding(
        "critical-path", kernel, top["ps"],
        f"critical path: {_share(ps, total)} of the launch's critical path is {cls}"
        f" ({', '.join(f'{c} {_share(v, total)}' for c, v in path['by_class'].items() if v)});"
        f" most on {top['loc']} ({top['category']}, {_us(top['ps'])}), and the task charged"
        f" most is {task['category']}/{task['action']} {task['task']} at {task['loc']}"
        f" ({_us(task['charged_ps'])}). Definition: S9, the last-arriving-predecessor walk"
        f" from the launch's end; threshold: {t.critical_share:.0%} of the launch in one class.",
        [{"view": "task", "loc": task["loc"], "task": task["task"], "t0": task["start_ps"],
          "t1": task["end_ps"]}])]


def latency_findings(kernel: int, latency: dict, path: dict | None, window: tuple[int, int]
                     ) -> list[dict]:
    """A queue-dominated memory hop (S4), by what its queues cost the critical path; and
    the worst latency outlier (S11)."""
    out = []
    hop = latency["top_hop"]
    if hop and latency["queue_dominated"] and path:
        name = "L1V[" if hop == "L1V" else f"{hop}["
        queued = sum(c["ps"] for c in path["by_component"]
                     if c["category"] == "wait" and f".{name}" in c["loc"])
        if queued:
            seg, total = latency["segments_ps"], latency["request_time_ps"]
            queue, service = seg[f"queue@{hop}"], seg[f"service@{hop}"]
            out.append(_finding(
                "memory-latency", kernel, queued,
                f"memory latency is queue-dominated at the {hop}: {_share(queue, total)} of the"
                f" CUs' request time waits in its buffers, more than its service"
                f" ({_share(service, total)}); the critical path waited {_us(queued)} there."
                " Definition: S4 queue@hop and service@hop; threshold: queue > service at the"
                " hop with the largest share.",
                [{"view": "overview", "filter": hop + r"\[", "t0": window[0], "t1": window[1]}]))
    dist = latency["distribution"]
    if dist.get("above_fence") and dist["outliers"]:
        worst = dist["outliers"][0]
        out.append(_finding(
            "latency-distribution", kernel, worst["ps"] - dist["p50_ps"],
            f"latency outliers: {dist['above_fence']} of {dist['count']} CU memory requests take"
            f" longer than Q3 + 3·IQR = {_us(dist['fence_ps'])} (p50 {_us(dist['p50_ps'])}, p99"
            f" {_us(dist['p99_ps'])}, max {_us(dist['max_ps'])}); the worst is task {worst['task']}."
            " Definition: S11; threshold: Q3 + 3·IQR.",
            [{"view": "task", "loc": worst["loc"], "task": worst["task"], "t0": worst["start_ps"],
              "t1": worst["end_ps"]}]))
    return out


def blocking_findings(kernel: int, blocked: dict, t: Thresholds) -> list[dict]:
    """The most blocking back-pressured buffer (S5)."""
    for row in blocked["ranking"]:
        if row["back_pressured"]:
            lo, hi = blocked["window_ps"]
            return [_finding(
                "blocking", kernel, row["full_ps"],
                f"back-pressure: {row['loc']}'s buffer of {row['capacity']} was full"
                f" {_share(row['full_ps'], hi - lo)} of the time ({row['mean_waiting']} requests"
                f" waiting on average, busy {row['busy']:.0%}"
                + (", saturated" if row["saturated"] else "") + "). Definition: S5, ranked by"
                f" the time requests waited; threshold: full {t.back_pressure:.0%} of the window.",
                [{"view": "component", "loc": row["loc"], "t0": lo, "t1": hi}])]
    return []


def imbalance_findings(kernel: int, uneven: dict, t: Thresholds, window: tuple[int, int]
                       ) -> list[dict]:
    """Peers whose load is uneven (S6), naming the hot one."""
    out = []
    for group, g in uneven.items():
        if g["imbalance"] is None or g["imbalance"] < t.imbalance or not g["excess_ps"]:
            continue
        out.append(_finding(
            "imbalance", kernel, g["excess_ps"],
            f"imbalance over the {g['peers']} {group}s: the hot one, {g['hot']}, has"
            f" {g['imbalance']}× the mean load ({g['hot_value']} {g['unit']} against"
            f" {g['mean_value']}; Gini {g['gini']}) and was busy {_us(g['excess_ps'])} longer"
            f" than the mean. Definition: S6, max ÷ mean; threshold: {t.imbalance}.",
            [{"view": "component", "loc": g["hot"], "t0": window[0], "t1": window[1]}]))
    return out


def roofline_findings(kernel: int, roof: dict, t: Thresholds, window: tuple[int, int]) -> list[dict]:
    """A launch far below its roofline (S8). The roof is a bound, not a cause: being far
    below it says that neither bandwidth nor compute holds the launch back, and explains
    no time by itself (it would otherwise outrank the finding that names the cause), so
    it ranks after the findings that do."""
    share = roof["roof_share"]
    if share is None or share >= t.roof_share or not roof["points"]:
        return []
    limiter = roof["limiter"]
    point = next((p for p in roof["points"] if p["level"] == limiter), None)
    where = (f"at arithmetic intensity {point['ai']} lane-ops/B the {limiter} roof allows"
             f" {point['attainable']:.3g} lane-ops/s" if point else
             f"the compute roof is {roof['peak_compute']:.3g} lane-ops/s")
    return [_finding(
        "roofline", kernel, 0,
        f"below the roofline: {roof['perf']:.3g} lane-ops/s is {share:.1%} of its roof; {where}:"
        " neither bandwidth nor compute is the limit (the findings above say what is)."
        f" Definition: S8, hierarchical roofline with the model's peaks; threshold:"
        f" {t.roof_share:.0%} of the roof.",
        [{"view": "overview", "filter": "SIMD" if limiter == "compute" else limiter + r"\[",
          "t0": window[0], "t1": window[1]}])]


def what_if_findings(kernel: int, results: list[dict], base_ps: int, t: Thresholds,
                     trace: str) -> list[dict]:
    """Measured speed-ups of one launch (S13), those that differ from 1 enough."""
    out = []
    for r in results:
        speedup, new = r["speedup"][kernel], r["times_ps"][kernel]
        if abs(speedup - 1) < t.what_if_change:
            continue
        out.append(_finding(
            "what-if", kernel, base_ps - new,
            f"what-if {r['key']} × {r['factor']:g} (= {r['value']}): launch {kernel} takes"
            f" {_us(new)} instead of {_us(base_ps)}, {speedup:.3f}× (re-simulated)."
            f" Definition: S13; threshold: |speed-up − 1| ≥ {t.what_if_change:g}.",
            [{"view": "compare", "a": trace, "b": r["trace"]}]))
    return out


def ranked(findings: list[dict]) -> list[dict]:
    """Findings with evidence, the most time explained first (then launch or device
    order: a profile's findings name a device, not a launch)."""
    shown = [f for f in findings if f["evidence"]]
    return sorted(shown, key=lambda f: (-f["explains_ps"], f["kernel"] if f["kernel"] is not None
                                        else f["device"] if f["device"] is not None else -1,
                                        f["rule"]))
