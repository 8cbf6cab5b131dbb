#!/usr/bin/env bash
# The main job from the README: install, simulate a benchmark, then serve the app on it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
mkdir -p traces
python -m simulator run transpose --force -o traces/transpose.sqlite
exec python -m dashapp --trace-dir traces --host "${HOST:-127.0.0.1}" --port "${PORT:-8050}"
