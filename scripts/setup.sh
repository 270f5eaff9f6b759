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
  echo "setup: installing the locked Python packages into .venv (first run or lock changed)"
  .venv/bin/pip install -q --disable-pip-version-check -r requirements.lock
  cp requirements.lock "$stamp"
fi
