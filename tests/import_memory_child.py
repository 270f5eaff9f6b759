"""Run by tests/test_import_memory.py in a fresh process: read a log file's bytes, then
decode and import them as the import form does (``GameSpec.import_match``), and print the
rise of the process's peak resident memory during that (kB) and the outcome as one JSON
line.  The peak is reset just before (``/proc/self/clear_refs``, Linux), so what the process
did before (Django's start-up, reading the file) does not count.

    python tests/import_memory_child.py GAME PATH
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")


def status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def main() -> None:
    import django

    django.setup()
    from games.arena import registry

    game, path = sys.argv[1], sys.argv[2]
    spec = registry.get(game)
    data = Path(path).read_bytes()
    Path("/proc/self/clear_refs").write_text("5")  # peak := current
    base = status_kib("VmRSS")
    try:
        parsed = spec.import_match(data.decode("utf-8"))
        outcome = {"steps": len(parsed["steps"])}
    except ValueError as exc:
        outcome = {"error": str(exc)}
    print(json.dumps({"peak_rise_kib": status_kib("VmHWM") - base, **outcome}))


if __name__ == "__main__":
    main()
