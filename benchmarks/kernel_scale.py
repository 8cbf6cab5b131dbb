"""Kernels of any size: peak memory, simulated time and speed at 1x, 4x and 16x the work-groups.

Issue #35: memory grew with the launch, because every wavefront's instruction stream
existed before the timing model started. Now a launch runs in batches of work-groups as
the dispatcher takes them. This benchmark runs six kernel families
(``benchmarks/kernels``) untraced on an 8-CU GPU (320 wavefronts at once), at 1x
(1,024 wavefronts), 4x and 16x the work-groups. For each it prints peak memory (the
process's maximum resident set), simulated time, wall time (the whole run, from the
kernel file to the end of the timing model), wavefront instructions per second and the
kernel's buffers (its working set, which grows with the launch by nature), and the peak
less the buffers, which is what must not grow with the launch.

The baseline runs the same code with the whole launch in one batch, which is how a
launch ran before: all its streams at once. Each point runs in its own process, so that
the peak is its own. The last columns are the peak at Nx over the peak at 1x, and the
same less the buffers; the goal is <= 1.2 at 16x.

    python benchmarks/kernel_scale.py [--families transpose spmv ...] [--scales 1 4 16]
"""
import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.kernels.families import FAMILIES, launch_spec  # noqa: E402

GPU = ["gpu.shader_arrays=2", "gpu.cus_per_shader_array=4"]   # 8 CUs: 320 wavefronts at once
WAVEFRONTS_1X = 1024


def own_peak_mib():
    """This process's peak resident set: its memory map's high-water mark. Linux carries
    the forking parent's resident set over exec into ``ru_maxrss``, so a child of a
    parent that made large buffers would report at least the parent's."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # no /proc


def child(spec_json):
    """Run one point (in its own process) and print its figures as JSON."""
    from simulator.gpu import apply_overrides, default_config
    from simulator.gpu.run import simulate
    from simulator.kernels import batches
    from simulator.kernels.frontend import compile_source
    from simulator.runs.kernel_cli import KernelFile

    spec = json.loads(spec_json)
    if spec["one_batch"]:
        batches.BATCHES_RESIDENT = 1e9   # the whole launch at once
    started = time.perf_counter()
    path = Path(spec["file"])
    program = compile_source(str(path), path.read_text())
    workload = KernelFile(program, None, tuple(spec["global"]), tuple(spec["local"]),
                          [tuple(a) for a in spec["args"]])
    result = simulate(workload, apply_overrides(default_config(), GPU), progress=False)
    wall = time.perf_counter() - started
    counts = workload.launch.work_groups.counts
    buffers = sum(arg.array.nbytes for arg in workload.args.values() if hasattr(arg, "array"))
    print(json.dumps({"peak_mib": own_peak_mib(),
                      "buffers_mib": buffers / 2**20,
                      "simulated_us": result.simulated_ps / 1e6, "wall": wall,
                      "instructions": counts.instructions, "wavefronts": counts.wavefronts,
                      "groups": len(workload.launch.work_groups)}))


def point(spec, one_batch):
    done = subprocess.run([sys.executable, __file__, "--child",
                           json.dumps(dict(spec, one_batch=one_batch))],
                          capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{spec['file']}: {done.stderr.strip().splitlines()[-1]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--families", nargs="+", choices=sorted(FAMILIES), default=sorted(FAMILIES))
    parser.add_argument("--scales", nargs="+", type=int, default=[1, 4, 16])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    print(f"untraced, on {', '.join(GPU)}; 1x = {WAVEFRONTS_1X} wavefronts")
    print(f"{'family':12s} {'scale':>5s} {'groups':>7s} {'wf-insts':>10s} {'sim us':>9s}"
          f" {'wall s':>7s} {'kinst/s':>8s} {'buffers':>8s} {'peak MiB':>9s} {'one batch':>10s}"
          f" {'ratio':>6s} {'vs 1x':>6s} {'net vs 1x':>9s}")
    with tempfile.TemporaryDirectory() as tmp:
        for family in args.families:
            first = None
            for scale in args.scales:
                spec = launch_spec(family, WAVEFRONTS_1X * scale, tmp)
                ours, base = point(spec, False), point(spec, True)
                assert ours["simulated_us"] == base["simulated_us"], "batching changed the timing"
                first = first or ours
                net = ours["peak_mib"] - ours["buffers_mib"]
                print(f"{family:12s} {scale:>4d}x {ours['groups']:>7,d} {ours['instructions']:>10,d}"
                      f" {ours['simulated_us']:>9.1f} {ours['wall']:>7.1f}"
                      f" {ours['instructions'] / ours['wall'] / 1e3:>8.0f}"
                      f" {ours['buffers_mib']:>8.1f} {ours['peak_mib']:>9.0f} {base['peak_mib']:>10.0f}"
                      f" {base['peak_mib'] / ours['peak_mib']:>5.2f}x"
                      f" {ours['peak_mib'] / first['peak_mib']:>5.2f}x"
                      f" {net / (first['peak_mib'] - first['buffers_mib']):>8.2f}x", flush=True)


if __name__ == "__main__":
    main()
