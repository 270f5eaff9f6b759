#!/usr/bin/env bash
# Makes sure what the test suite needs outside Python is installed and running:
# Debian's chromium (Playwright drives /usr/bin/chromium), PostgreSQL and Redis on 127.0.0.1.
set -euo pipefail
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_updated=""
need_pkg() {
  if ! dpkg -s "$1" >/dev/null 2>&1; then
    [ -n "$apt_updated" ] || { as_root apt-get update -q >/dev/null; apt_updated=1; }
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$1" >/dev/null
  fi
}
need_pkg chromium
command -v pg_ctlcluster >/dev/null || need_pkg postgresql
command -v redis-server >/dev/null || need_pkg redis-server
if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -n 1)" main start
  for _ in $(seq 50); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 0.2; done
fi
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  mkdir -p /var/lib/redis /var/log/redis
  as_root redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 50); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.2; done
fi
