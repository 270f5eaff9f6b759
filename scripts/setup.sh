#!/usr/bin/env bash
# Creates .venv and installs the Python packages (add "test" for the test tools).
# Idempotent: a second run only checks that everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
extras=""
[ "${1:-}" = "test" ] && extras="[test]"
stamp=".venv/.installed${extras}"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -e ".${extras}"
  touch "$stamp"
fi
