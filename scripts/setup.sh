#!/usr/bin/env bash
# Creates .venv and installs the exact versions in requirements.lock (the server's packages and
# the test tools: one install serves both README commands).  Idempotent: when the lock has not
# changed since the last install, it only checks and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $("$PY" --version)"
  "$PY" -m venv .venv
fi
stamp=.venv/.installed-lock
if [ ! -f "$stamp" ] || ! cmp -s requirements.lock "$stamp"; then
  # PyICU (look-alike names, games/arena/bots/names.py) is built against Debian's ICU: its headers,
  # pkg-config, a C++ compiler and Python's headers must be there before pip builds it.
  if ! .venv/bin/python -c "import icu" 2>/dev/null; then
    as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
    include=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
    missing=()
    for pkg in libicu-dev pkg-config g++; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
    [ -f "$include/Python.h" ] || missing+=(python3-dev)
    if [ ${#missing[@]} -gt 0 ]; then
      echo "setup: installing ${missing[*]} (Debian) to build PyICU"
      as_root apt-get update -q >/dev/null
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
    fi
    echo "setup: building PyICU against the system's ICU (a minute or two, once)"
  fi
  echo "setup: installing the locked Python packages into .venv (first run or lock changed;" \
       "the first install takes a few minutes)"
  # pip's own output is a few lines per package; show one line per 25 fetched instead (its
  # warnings and errors go to stderr, unfiltered).
  .venv/bin/pip install --disable-pip-version-check --progress-bar off -r requirements.lock | awk '
    /^Collecting / { n++; if (n % 25 == 0) { printf "setup:   %d packages fetched\n", n; fflush() } }
    /^Installing collected packages/ { print "setup:   unpacking them into .venv (the longest step)"; fflush() }
    /^Successfully installed/ { print "setup:   Python packages installed"; fflush() }'
  cp requirements.lock "$stamp"
fi
# The browser libraries we serve from our own static files (Chart.js: package-lock.json; no
# CDN).  Like the pip step: install when node_modules/chart.js is missing or the lock changed.
npm_stamp=node_modules/.installed-lock
if [ ! -f node_modules/chart.js/dist/chart.umd.js ] || [ ! -f "$npm_stamp" ] || ! cmp -s package-lock.json "$npm_stamp"; then
  if command -v npm >/dev/null 2>&1; then
    echo "setup: installing the locked npm packages into node_modules (first run or lock changed)"
    npm ci --no-audit --no-fund
    cp package-lock.json "$npm_stamp"
  else
    echo "setup: npm not found: install Node.js and npm (Debian: apt-get install npm), then run this again;" \
         "until then the bot pages show their rating numbers without the chart" >&2
  fi
fi
