#!/usr/bin/env bash
# The test command from the README: install, then run every test (browser tests included).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --browser
python -m pytest "$@"
