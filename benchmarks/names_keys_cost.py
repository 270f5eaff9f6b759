"""What names and keys cost the server (issue 23, *Names and keys*), in CPU time of this process.

- A name's look-alike keys (``games.arena.bots.names.name_keys``: two ICU skeletons and case
  foldings), for a short name, 40 Latin letters, and the longest expansions (U+FDFA, 18
  letters each) at 40 and at the bound of 150 characters.
- A wrong bot key (``games.arena.bots.bot_keys.identify``: SHA-256, a lookup in the unique index of
  key hashes, the address's count in the cache), which a right key never waits behind: past
  ``ARENA_BOT_KEY_FAILURES_PER_MINUTE`` each one also costs its connection, so an address pays
  for at most ``ARENA_CONNECTIONS_PER_S_PER_ADDRESS`` of them a second.

Runs in a throw-away test database of the configured kind (SQLite by default; set
``DATABASE_URL`` for PostgreSQL); nothing is written to ``var/``::

    .venv/bin/python benchmarks/names_keys_cost.py [--keys 2000]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")


def per_call_us(fn, n: int) -> float:
    start = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=2000, help="wrong keys to time")
    args = parser.parse_args()

    import django

    django.setup()
    from django.db import connection

    from games.arena.bots import bot_keys
    from games.arena.bots.names import name_keys

    print(f"load average {os.getloadavg()[0]:.1f}")
    for label, name in [("alice…", "alice…"), ("40 Latin letters", "x" * 40),
                        ("40 x U+FDFA", "\ufdfa" * 40), ("150 x U+FDFA", "\ufdfa" * 150)]:
        n = 200 if "FDFA" in label else 5000
        print(f"name_keys({label}): {per_call_us(lambda: name_keys(name), n):.0f} us")

    test_db = connection.creation.create_test_db(verbosity=0)
    try:
        keys = iter([bot_keys.new_key()[0] for _ in range(args.keys)])
        hosts = iter([f"10.{i // 65536}.{i // 256 % 256}.{i % 256}" for i in range(args.keys)])

        def wrong() -> None:
            try:
                bot_keys.identify("liars_dice", next(keys), next(hosts))
            except bot_keys.KeyRefused:
                pass

        print(f"a wrong bot key ({connection.vendor}): {per_call_us(wrong, args.keys):.0f} us")
    finally:
        connection.creation.destroy_test_db(test_db, verbosity=0)


if __name__ == "__main__":
    main()
