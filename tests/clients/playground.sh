#!/usr/bin/env bash
# The playground in a real browser: builds the page (playground/build.sh), serves it
# with `switchboard serve --playground`, and drives Debian's Chromium headless with
# Playwright (tests/clients/test_playground.py). Playwright comes from PyPI into a
# virtualenv; the browser is the system's, never `playwright install`.
#
#   tests/clients/playground.sh [extra pytest args]
#
# Environment:
#   SWITCHBOARD_BIN   switchboard binary (default target/release/switchboard)
#   CHROMIUM          browser (default /usr/bin/chromium; apt-get installs it as root)
#   PLAYGROUND_VENV   virtualenv to create or reuse (default target/playground-venv)
#   PLAYGROUND_DIR    where the page is built (default target/playground)
#   PYTHON            interpreter that creates the venv (default python3)
#   CI=true           a failed install is an error (exit 1), not a skip
#
# Build the binary first: cargo build --release -p switchboard-cli --bin switchboard
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root" || exit 1

venv="${PLAYGROUND_VENV:-target/playground-venv}"
python="${PYTHON:-python3}"
requirements="$here/requirements-playground.txt"
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"

install_failed() {
    if [ "${CI:-}" = "true" ]; then
        echo "" >&2
        echo "########################################################################" >&2
        echo "## ERROR: tests/clients/playground.sh: $1" >&2
        echo "## The playground's browser test (Chromium + Playwright) cannot run." >&2
        echo "########################################################################" >&2
        exit 1
    fi
    echo "tests/clients/playground.sh: $1" >&2
    echo "SKIPPED: the playground's browser test (set CI=true to make this an error)"
    exit 0
}

if [ ! -x "$CHROMIUM" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
            || install_failed "apt-get install chromium failed"
    fi
    [ -x "$CHROMIUM" ] || install_failed "no browser at $CHROMIUM (apt-get install chromium)"
fi

stamp="$venv/.requirements.sha256"
want="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv" || install_failed "could not create a virtualenv at $venv with $python -m venv"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" \
        || install_failed "pip install -r $requirements failed"
    echo "$want" > "$stamp"
fi
"$venv/bin/python" -c "import playwright.sync_api, pytest, pytest_timeout" \
    || install_failed "the installed packages do not import"

abspath() { case "$1" in /*) echo "$1" ;; *) echo "$root/$1" ;; esac; }
export SWITCHBOARD_BIN="$(abspath "${SWITCHBOARD_BIN:-target/release/switchboard}")"
if [ ! -x "$SWITCHBOARD_BIN" ]; then
    echo "ERROR: tests/clients/playground.sh: $SWITCHBOARD_BIN is missing or not executable." >&2
    echo "Build it: cargo build --release -p switchboard-cli --bin switchboard" >&2
    exit 1
fi
export PLAYGROUND_DIR="$(abspath "${PLAYGROUND_DIR:-target/playground}")"
bash "$root/playground/build.sh" "$PLAYGROUND_DIR" || exit 1

export PYTHONDONTWRITEBYTECODE=1
unset PYTHONPATH
"$venv/bin/python" -m pytest -c "$here/pytest.ini" --rootdir "$here" -v "$here/test_playground.py" "$@"
status=$?
if [ "$status" -eq 5 ]; then
    echo "ERROR: tests/clients/playground.sh: pytest collected no tests" >&2
    exit 1
fi
exit "$status"
