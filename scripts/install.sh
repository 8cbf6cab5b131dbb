#!/usr/bin/env bash
# Install what the project needs: the Python package with its Cython extensions and test
# extras, and, with --browser (the test install), Debian's Chromium + ChromeDriver for the
# browser tests and gcc for the differential test of the kernel language's arithmetic.
# A second run with nothing changed returns at once: the Python install is skipped when
# the files it builds from hash the same as at the last successful install.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
if [ ! -f /usr/include/sqlite3.h ]; then
    # the header the C bulk inserter (simulator/tracing/_bulk.pyx) compiles against
    need_apt+=(libsqlite3-dev)
fi
if [ "${1:-}" = "--browser" ] && { ! command -v chromium >/dev/null 2>&1 \
        || ! command -v chromedriver >/dev/null 2>&1; }; then
    need_apt+=(chromium chromium-driver)
fi
if [ "${1:-}" = "--browser" ] && ! command -v gcc >/dev/null 2>&1; then
    # the C compiler tests/test_constants_vs_gcc.py holds the kernel language's arithmetic against
    need_apt+=(gcc)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
    SUDO=""
    if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
    echo "install: apt-get install ${need_apt[*]}"
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need_apt[@]}"
fi

# The test install (--browser) adds the test extras (pytest, selenium, the reference tools
# the tests hold us against, such as HolisticTraceAnalysis and its Jupyter dependencies);
# the demo needs none of them. Each kind of install has its stamp; a test install also
# serves the demo.
if [ "${1:-}" = "--browser" ]; then
    target='.[test]'; stamps=(build/.install-stamp-test)
else
    target='.'; stamps=(build/.install-stamp build/.install-stamp-test)
fi
# what the extensions compile from: the .pyx and .pxd files, the pure-mode .py beside
# each .pxd, and simulator/build.py (which lists them)
digest=$( { python --version; cat pyproject.toml setup.py simulator/build.py; \
            find simulator -name '*.pyx' -o -name '*.pxd' | LC_ALL=C sort | while read -r f; do
                echo "$f"; case "$f" in *.pxd) [ ! -f "${f%.pxd}.py" ] || echo "${f%.pxd}.py";; esac
            done | xargs cat; } \
          | sha256sum | cut -d' ' -f1)
# ... and the package installed is this checkout (not another clone's editable install)
installed_here() {
    local here=$PWD
    (cd / && python -c "import pathlib, sys, simulator
sys.exit(pathlib.Path(simulator.__file__).resolve().parents[1] != pathlib.Path(sys.argv[1]).resolve())" \
        "$here") 2>/dev/null
}
for stamp in "${stamps[@]}"; do
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ] && installed_here; then
        echo "install: up to date (nothing changed since the last install)"
        exit 0
    fi
done
echo "install: pip install -e '$target' (compiles the Cython extensions: about a minute)"
python -m pip install --disable-pip-version-check -q -e "$target"
mkdir -p build
echo "$digest" > "${stamps[0]}"
echo "install: done"
