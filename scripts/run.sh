#!/usr/bin/env bash
# Sets up and starts the arena on embedded defaults: SQLite under var/, the in-memory channel
# layer, migrations applied, http://127.0.0.1:8000/ and the Liar's Dice bot port 5533.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec .venv/bin/python manage.py serve "$@"
