#!/usr/bin/env bash
# Install everything the project needs: Debian's Chromium + ChromeDriver (browser tests)
# and the Python package with its Cython extensions and test extras.
set -euo pipefail
cd "$(dirname "$0")/.."
# libsqlite3-dev: the header the C bulk inserter (simulator/tracing/_bulk.pyx) compiles against.
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1 \
        || [ ! -f /usr/include/sqlite3.h ]; then
    SUDO=""
    if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends chromium chromium-driver libsqlite3-dev
fi
python -m pip install --disable-pip-version-check -q -e '.[test]'
