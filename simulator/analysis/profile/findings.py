"""Findings on a real profile: what I1–I9 say, each with the time it explains and the
views that show it (the evidence dicts of ``analysis.findings``).

A profile finding names its device instead of a launch (``"kernel": None``,
``"device": d``). Its message gives the numbers, the definition and the threshold
(rule R1); a finding without evidence is not shown (R4). ``explains_ps`` is GPU time
on the device, so findings rank with one another on one scale.
"""
from __future__ import annotations

from ..thresholds import Thresholds

PS_PER_US = 10 ** 6


def _us(ps: int) -> str:
    return f"{ps / PS_PER_US:,.3f} µs"


def _device_filter(device: int) -> str:
    return rf"GPU\[{device}\]\.stream"


def _finding(rule: str, device: int | None, explains: int, message: str, evidence: list[dict]) -> dict:
    return {"rule": rule, "kernel": None, "device": device, "explains_ps": int(explains),
            "message": message, "evidence": evidence}


def budget_findings(rows: list[dict], t: Thresholds) -> list[dict]:
    """I1: a device idle for more than its share of the span."""
    out = []
    for r in rows:
        if r["span_ps"] and r["idle_ps"] > t.idle_share_device * r["span_ps"]:
            out.append(_finding(
                "time-budget", r["device"], r["idle_ps"],
                f"GPU {r['device']} is idle {_us(r['idle_ps'])} of its {_us(r['span_ps'])}"
                f" ({r['idle_ps'] / r['span_ps']:.1%}); compute {_us(r['compute_ps'])},"
                f" non-compute {_us(r['non_compute_ps'])}, copy-only {_us(r['copy_only_ps'])}."
                " Definition: I1, HTA's temporal breakdown (idle = span − |∪ GPU operations|);"
                f" threshold: {t.idle_share_device:.0%} of the span (proposed).",
                [{"view": "overview", "filter": _device_filter(r["device"]),
                  "t0": r["first_ps"], "t1": r["last_ps"]}]))
    return out


def idle_findings(rows: list[dict], t: Thresholds) -> list[dict]:
    """I4 (HTA): a stream's largest idle class, with its longest gap."""
    out = []
    for r in rows:
        cls = max(("host_wait", "kernel_wait", "other"), key=lambda c: r[f"{c}_ps"])
        gap = r.get(f"{cls}_longest")
        if not r["idle_ps"] or gap is None:
            continue
        out.append(_finding(
            "idle-cause", r["device"], r[f"{cls}_ps"],
            f"{r['loc']} is idle {_us(r['idle_ps'])}, mostly {cls.replace('_', ' ')}"
            f" ({_us(r[f'{cls}_ps'])}); the longest such gap lasts {_us(gap['t1'] - gap['t0'])}."
            " Definition: I4, HTA's idle breakdown (host wait: the next operation was launched"
            f" after the stream emptied; kernel wait: a gap under {t.consecutive_kernel_delay_us}"
            " µs; other: the rest).",
            [{"view": "component", "loc": r["loc"], "t0": gap["t0"], "t1": gap["t1"]},
             {"view": "task", "loc": r["loc"], "task": gap["task"], "t0": gap["t0"],
              "t1": gap["t1"]}]))
    return out


def starvation_findings(rows: list[dict], t: Thresholds) -> list[dict]:
    """I4 (TraceLens): a device's largest idle class, with its longest gap."""
    out = []
    for r in rows:
        if not r["classes"]:
            continue
        name, top = next(iter(r["classes"].items()))
        drain, cls = name.split("/")
        g = top["longest"]
        evidence = [{"view": "component", "loc": g["loc"], "t0": g["t0"], "t1": g["t1"]}]
        if g["thread"]:
            evidence.append({"view": "component", "loc": g["thread"], "t0": g["t0"], "t1": g["t1"]})
        why = (f"; {g['runtime']['name']} ({g['runtime']['kind']}) fills the longest"
               if g["runtime"] else f"; {g['dominant_op']['name'][:80]} holds most of the"
               " longest's CPU time" if g["dominant_op"] else "")
        out.append(_finding(
            "idle-gaps", r["device"], top["ps"],
            f"GPU {r['device']}'s idle gaps are mostly {drain.replace('_', ' ')} and"
            f" {cls.replace('_', ' ').lower()} ({top['count']} gaps, {_us(top['ps'])} of"
            f" {_us(r['gap_ps'])}){why}. Definition: I4, TraceLens' idle classes (drain:"
            " a synchronizing call ended in the gap before the launch, else starved; CPU"
            f" during the gap: launch anomaly over {t.launch_to_exec_us} µs, launch overhead"
            f" only, a runtime call ≥ {t.runtime_share:.0%}, CPU self time ≥"
            f" {t.cpu_share:.0%}, else untraced); gaps under {t.noise_us} µs are noise.",
            evidence))
    return out


def launch_findings(rows: list[dict], t: Thresholds) -> list[dict]:
    """I5: launch-delay outliers, with the worst launch (the time it explains: delays of
    queued launches overlap, so only the worst one's is counted)."""
    out = []
    for r in rows:
        w = r["worst_delay"]
        if not r["delay_outliers"]:
            continue
        out.append(_finding(
            "launch-stats", r["device"], w["delay_ps"],
            f"{r['delay_outliers']} of {r['launches']} launches on GPU {r['device']} wait more"
            f" than {t.launch_delay_cutoff_us} µs between the call's end and the operation's"
            f" start ({_us(r['launch_delay_ps'])} in all; the worst {_us(w['delay_ps'])});"
            f" {r['runtime_outliers']} calls last more than {t.runtime_cutoff_us} µs and"
            f" {r['short_kernels']} operations are shorter than their call. Definition: I5,"
            " HTA's launch statistics (launch delay = max(0, start − call end)).",
            [{"view": "task", "loc": w["loc"], "task": w["task"], "t0": w["t0"], "t1": w["t1"]},
             {"view": "component", "loc": w["thread"], "t0": w["t0"], "t1": w["t1"]}]))
    return out


def queue_findings(rows: list[dict], t: Thresholds) -> list[dict]:
    """I8: a stream whose launch queue reached its limit (the CPU then blocks)."""
    return [_finding(
        "queue-length", r["device"], r["at_max_ps"],
        f"{r['loc']}'s launch queue holds {t.max_queue_length} operations or more for"
        f" {_us(r['at_max_ps'])} (peak {r['max']}, mean {r['mean']:.1f}): launches block the"
        " CPU. Definition: I8, HTA's queue length (+1 at a launch, −1 at an operation's"
        f" start); threshold: {t.max_queue_length} (CUDA's queue).",
        [{"view": "component", "loc": r["loc"], "t0": r["peak_ps"], "t1": r["peak_ps"] + 1}])
        for r in rows if r["at_max_ps"]]


def overlap_findings(rows: list[dict], t: Thresholds, budget: list[dict]) -> list[dict]:
    """I9: communication that computation hides too little of."""
    spans = {b["device"]: (b["first_ps"], b["last_ps"]) for b in budget}
    return [_finding(
        "overlap", r["device"], r["communication_ps"] - r["comm_overlapped_ps"],
        f"on GPU {r['device']} computation overlaps {r['comm_overlap']:.1%} of the"
        f" {_us(r['communication_ps'])} of communication. Definition: I9, HTA's comm/comp"
        f" overlap; threshold: {t.overlap_share:.0%} (nsys-ai).",
        [{"view": "overview", "filter": _device_filter(r["device"]),
          "t0": spans[r["device"]][0], "t1": spans[r["device"]][1]}])
        for r in rows if r["comm_overlap"] is not None and r["comm_overlap"] < t.overlap_share]


def gap_findings(rows: list[dict], t: Thresholds) -> list[dict]:
    """I2: the long gaps of a device, with the stream and the CPU thread behind the longest."""
    out = []
    for r in rows:
        if not r["rows"]:
            continue
        g = r["rows"][0]
        t0, t1 = g["start_ps"], g["start_ps"] + g["duration_ps"]
        evidence = [{"view": "component", "loc": g["after"]["loc"], "t0": t0, "t1": t1}]
        if g["thread"]:
            evidence.append({"view": "component", "loc": g["thread"], "t0": t0, "t1": t1})
        total = sum(x["duration_ps"] for x in r["rows"])
        out.append(_finding(
            "gaps", r["device"], total,
            f"GPU {r['device']} runs nothing in {r['long_gaps']} gaps of {t.gap_us:,} µs or more"
            f" ({_us(total)} in the {len(r['rows'])} listed; the longest {_us(g['duration_ps'])});"
            f" {r['gaps']} gaps above the {t.noise_us} µs noise floor hold {_us(r['gap_ps'])}."
            " Definition: I2, the gaps of the union of the device's operations (nsys gpu_gaps).",
            evidence))
    return out


def utilization_findings(rows: list[dict], t: Thresholds) -> list[dict]:
    """I3: windows where the device was in use less than the threshold."""
    out = []
    for r in rows:
        for w in r["windows"]:
            idle = round((w["t1"] - w["t0"]) * (1 - min(w["in_use"], 1)))
            out.append(_finding(
                "low-utilization", r["device"], idle,
                f"GPU {r['device']} is in use {w['in_use']:.1%} of [{_us(w['t0'])},"
                f" {_us(w['t1'])}) ({w['chunks']} of {t.util_chunks} chunks). Definition: I3,"
                " nsys gpu_time_util (time utilization per chunk); threshold:"
                f" {t.util_threshold:.0%}.",
                [{"view": "overview", "filter": _device_filter(r["device"]), "t0": w["t0"],
                  "t1": w["t1"]}]))
    return out


RULE_TEXT = {"cuda_memcpy_async": "asynchronous copies from or to pageable memory (use pinned"
                                  " memory)",
             "cuda_memcpy_sync": "synchronous copies (use cudaMemcpy*Async)",
             "cuda_memset_sync": "synchronous memsets on pinned or managed memory",
             "cuda_api_sync": "synchronization calls (cudaDeviceSynchronize, cudaStreamSynchronize)"}


def rule_findings(rules: list[dict]) -> list[dict]:
    """I6: each nsys rule that finds rows, with its longest row."""
    out = []
    for r in rules:
        if not r["count"]:
            continue
        top = r["rows"][0]
        t0, t1 = top["start_ps"], top["start_ps"] + top["duration_ps"]
        evidence = [{"view": "task", "loc": top["loc"], "task": top["task"], "t0": t0, "t1": t1}]
        if "thread" in top:
            evidence.append({"view": "component", "loc": top["thread"], "t0": t0, "t1": t1})
        out.append(_finding(
            "anti-patterns", None, r["total_ps"],
            f"{r['count']} {RULE_TEXT[r['rule']]}, {_us(r['total_ps'])} in all; the longest"
            f" {_us(top['duration_ps'])} ({top['api']}). Definition: I6, nsys rule {r['rule']}.",
            evidence))
    return out


def hotspot_findings(kernels: list[dict], t: Thresholds) -> list[dict]:
    """I7: one kernel name holding most of the kernel time."""
    if not kernels or kernels[0]["time_share"] <= t.hotspot_share:
        return []
    k = kernels[0]
    return [_finding(
        "kernel-summary", None, k["total_ps"],
        f"{k['name'][:120]} holds {k['time_share']:.1%} of kernel time ({k['instances']}"
        f" instances, {_us(k['total_ps'])}). Definition: I7, nsys cuda_gpu_kern_sum Time %;"
        f" threshold: {t.hotspot_share:.0%} (nsys-ai).",
        [{"view": "task", **k["longest"]}])]


def critical_path_findings(path: dict, t: Thresholds) -> list[dict]:
    """I10: the bound that holds the largest share of the CPU–GPU critical path, with
    the task most of the path is attributed to."""
    if not path["length_ps"] or path["dominant"] is None:
        return []
    bound, top = next(iter(path["bound_by"].items()))
    if top["share"] < t.critical_share:
        return []
    d = path["dominant"]
    shares = ", ".join(f"{b} {v['share']:.1%}" for b, v in path["bound_by"].items() if v["ps"])
    return [_finding(
        "critical-path", None, top["ps"],
        f"{bound.replace('_', ' ')} holds {top['share']:.1%} of the {_us(path['length_ps'])}"
        f" critical path through the CPU and the GPU ({shares}); {d['name'][:120]} on"
        f" {d['loc']} carries {_us(d['ps'])} of it. Definition: I10, HTA's lightweight critical"
        " path (operator, dependency, launch-delay, kernel-kernel and sync edges; the longest"
        f" path; kernel-kernel gaps under {t.kernel_kernel_delay_us:,} µs); threshold:"
        f" {t.critical_share:.0%} of the path.",
        [{"view": "task", "loc": d["loc"], "task": d["task"], "t0": d["t0"], "t1": d["t1"]},
         {"view": "component", "loc": d["loc"], "t0": d["t0"], "t1": d["t1"]}])]


def pace_findings(p: dict, t: Thresholds) -> list[dict]:
    """I12: iterations whose pace jitters, with the slowest one."""
    if "unavailable" in p or not p["jitter"]:
        return []
    s, out = p["slowest"], p["duration_outliers"]["count"]
    return [_finding(
        "pace", None, p["beyond_median_ps"],
        f"{p['count']} iterations of {p['subject'][:80]} start every {_us(p['median_delta_ps'])}"
        f" (median; mean {_us(round(p['mean_delta_ps']))}) with a CV of {p['cv']:.2f}; the"
        f" slowest starts {_us(s['delta_ps'])} after the one before, and the slower ones take"
        f" {_us(p['beyond_median_ps'])} beyond the median pace; {out} iteration"
        f"{'' if out == 1 else 's'} and {p['delta_outliers']['count']} delta"
        f"{'' if p['delta_outliers']['count'] == 1 else 's'} lie above Q3 + 3 IQR."
        " Definition: I12, the pace of iterations (nsys cuda_gpu_kern_pace, nvtx_pace):"
        " delta = start − the previous start, CV = sample standard deviation ÷ mean of the"
        f" deltas; threshold: CV {t.pace_cv} (proposed).",
        [{"view": "task", "loc": s["loc"], "task": s["task"], "t0": s["t0"], "t1": s["t1"]},
         {"view": "component", "loc": s["loc"], "t0": s["t0"], "t1": s["t1"]}])]


def sol_findings(sol: dict, t: Thresholds) -> list[dict]:
    """I14: kernels bound by, or leaning on, the SMs or memory, by NCU's rule on the
    counters sampled inside them."""
    out = []
    for k in sol.get("kernels", []):
        if k["kind"] in ("latency-bound", "balanced"):
            continue
        share = max(k["compute_sol"], k["memory_sol"])
        where = k["longest"]
        out.append(_finding(
            "speed-of-light", k["device"], round(share * k["total_ps"]),
            f"{k['name'][:120]} is {k['kind']}: SM throughput {k['compute_sol']:.0%}, memory"
            f" throughput {k['memory_sol']:.0%} of peak over {_us(k['covered_ps'])} of its"
            f" {k['instances']} instances' {_us(k['total_ps'])} (GPU counters). Definition:"
            " I14, Nsight Compute's SOL rule on the counters inside the kernel; thresholds:"
            f" bound {t.sol_bound:.0%}, latency {t.sol_latency:.0%}, gap {t.sol_gap:.0%}.",
            [{"view": "task", **where},
             {"view": "component", "loc": where["loc"], "t0": where["t0"], "t1": where["t1"]}]))
    return out
