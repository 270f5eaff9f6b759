#!/usr/bin/env bash
# Refreshes requirements.lock from the ranges in pyproject.toml (runtime and test extras), with
# pip-tools in a throw-away virtualenv.  Run it after changing a dependency, then run
# ./scripts/test.sh (which installs the new lock) and commit both files.
#
#   ./scripts/lock.sh            keeps every pin already in the lock that its range still allows,
#                                and adds only what is new (a new package and what it needs)
#   ./scripts/lock.sh --upgrade  moves every package to the newest version its range allows
set -euo pipefail
cd "$(dirname "$0")/.."
upgrade=()
case "${1:-}" in
  "") ;;
  --upgrade) upgrade=(--upgrade) ;;
  *) echo "usage: $0 [--upgrade]" >&2; exit 2 ;;
esac
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
python3 -m venv "$tools"
"$tools/bin/pip" install -q --disable-pip-version-check pip-tools
"$tools/bin/pip-compile" -q ${upgrade[@]+"${upgrade[@]}"} --extra test --strip-extras --no-emit-index-url \
  --no-emit-find-links -o requirements.lock pyproject.toml
echo "requirements.lock refreshed; run ./scripts/test.sh, then commit it with pyproject.toml"
