#!/usr/bin/env bash
# Sets up and runs the whole test suite: Python packages, Debian's chromium for the browser
# tests, and the PostgreSQL and Redis servers the scaled-mode tests use for real.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/services.sh
# Two workers (pytest-xdist): most tests wait on a server process or a browser, so two at
# once nearly halve the wall time on a two-core machine; `-n 0` (passed on) runs in one.
# worksteal: an idle worker takes tests from the other's queue, so the long browser games
# do not leave one worker alone at the end.
exec .venv/bin/python -m pytest -n 2 --dist worksteal "$@"
