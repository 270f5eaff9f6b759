#!/usr/bin/env bash
# Sets up and runs the whole test suite: Python packages, Debian's chromium for the browser
# tests, and the PostgreSQL and Redis servers the scaled-mode tests use for real.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/services.sh
exec .venv/bin/python -m pytest "$@"
