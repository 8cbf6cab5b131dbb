#!/usr/bin/env bash
# The main job from the README: install, simulate the demo's traces, serve the app on them.
# The first trace (transpose) is simulated before the app starts; the others, one for each
# view the README shows, are simulated in the background while the app already serves, and
# appear on its Traces page as each finishes (a trace being written is listed as running).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
traces="${TRACE_DIR:-traces}"
mkdir -p "$traces"
run() { python -m simulator "$@" --no-progress; }
run run transpose --force -o "$traces/transpose.sqlite" \
    --note "Start here: the Daisen views. A tiled matrix transpose, bound by DRAM: Overview, then a component's Gantt chart, then a task"
(
    set +e  # a trace that fails leaves the others to be made (its error is in the log)
    run run reduction-v1 --size 1024 --local 256 --force -o "$traces/reduction-v1.sqlite" \
        --note "Branching view: interleaved addressing makes lanes of one wavefront take different paths"
    run run reduction-v2 --size 1024 --local 256 --force -o "$traces/reduction-v2.sqlite" \
        --note "Memory view: strided indexing into local memory, and the bank conflicts it causes"
    run run reduction-v3 --size 1024 --local 256 --force -o "$traces/reduction-v3.sqlite" \
        --note "Memory view, fixed: sequential addressing, no bank conflicts (compare with v2)"
    run run sobel --width 128 --height 96 --local-x 16 --local-y 8 --force -o "$traces/sobel.sqlite" \
        --note "Branching view over an image: the work-items that load the tile's apron diverge"
    run run vectoradd --force -o "$traces/vectoradd.sqlite" \
        --note "Debug view: each sum is @emit-ted and @bind-ed to a line chart"
    run sweep pagerank --vary cp.wg_dispatch_per_cycle=1,2 -o "$traces/pagerank-dispatch" \
        --note "Daisen's case study: dispatching 2 work-groups a cycle instead of 1; compare the two points"
    echo "demo: every trace is made"
) > "$traces/demo.log" 2>&1 &
echo "demo: simulating the other traces in the background (log: $traces/demo.log);"
echo "      they appear on the Traces page as each finishes"
exec python -m dashapp --trace-dir "$traces" --host "${HOST:-127.0.0.1}" --port "${PORT:-8050}"
