#!/usr/bin/env bash
# Sets up and starts the arena on embedded defaults: SQLite under var/, the in-memory channel
# layer, migrations applied, and one process listening on (each address a setting):
#   web pages and browsers' WebSockets  http://127.0.0.1:8000/  ARENA_HOST / ARENA_HTTP_PORT
#   Liar's Dice bots (TCP, JSON lines)  127.0.0.1:5533          LIARS_DICE_HOST / LIARS_DICE_PORT
#   Blokus bots and admins (TCP, XML)   127.0.0.1:13050         BLOKUS_HOST / BLOKUS_PORT
#   Hanabi bots (WebSocket, any path)   127.0.0.1:4444          HANABI_HOST / HANABI_PORT
# Jass bots listen themselves: the server calls them over HTTP.  Arguments go to
# `manage.py serve` (--host, --port, --role).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
echo "run: applying database migrations, then starting the server; it logs each listener as it" \
     "opens (web: ARENA_HTTP_PORT, default 8000; bots: LIARS_DICE_PORT 5533, BLOKUS_PORT 13050," \
     "HANABI_PORT 4444). Ctrl-C stops it."
exec .venv/bin/python manage.py serve "$@"
