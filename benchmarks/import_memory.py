"""What hostile replay uploads cost the server's memory, and what a real import costs.

What it measures
    A real server (``manage.py serve``, as the README starts it, SQLite) and, from loopback:

    * its resident memory (``VmRSS``) once it has answered a first page;
    * ``--parallel`` uploads at once to ``/import/blokus/`` of hostile files, each a little
      under the 5 MiB upload bound (the kinds alternate): ``flat``, ``<protocol>`` holding
      600,000 empty ``<room/>`` elements (4.2 MB); ``wide``, one memento's ``<state>``
      holding 600,000 empty elements; ``repeats``, the first memento of a real replay
      repeated to fill the file.  Printed: each answer's status and message, the peak
      memory seen while they were read (sampled every 10 ms) and the memory 2 s after;
    * one import of a real replay file (``tests/data/blokus/synthetic-2021-regular.xml``,
      59 mementos), and the memory after it.

    The per-minute import limit (``ARENA_IMPORTS_PER_MINUTE``) is raised for the run, so that
    every hostile file is read rather than refused at the door.

Run: ``.venv/bin/python benchmarks/import_memory.py [--parallel 12]``.
"""
from __future__ import annotations

import argparse
import html
import re
import shutil
import sys
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.serverproc import start_arena  # noqa: E402

REAL = ROOT / "tests" / "data" / "blokus" / "synthetic-2021-regular.xml"
UPLOAD_BOUND = 5 * 1024 * 1024 - 4096


def hostile_files() -> dict[str, bytes]:
    """The hostile uploads by kind, each under the upload bound."""
    real = REAL.read_text()
    first_room = real[real.index("<room"):real.index("</room>") + len("</room>")] + "\n"
    state_open = re.search(r"<state [^>]*>", first_room).group(0)
    wide = ('<protocol>\n<room roomId="x">\n<data class="memento">\n' + state_open
            + "<a/>" * 600_000 + "</state></data></room></protocol>")
    repeats = "<protocol>\n" + first_room * ((UPLOAD_BOUND - 30) // len(first_room)) + "</protocol>"
    return {"flat": ("<protocol>" + "<room/>" * 600_000 + "</protocol>").encode(),
            "wide": wide.encode(), "repeats": repeats.encode()}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def upload(base: str, name: str, data: bytes) -> tuple[int, str]:
    """POST ``data`` as a replay file, as the import form does; (status, the page's message)."""
    with httpx.Client(base_url=base, timeout=120) as client:
        client.get("/import/blokus/")
        resp = client.post("/import/blokus/", data={"csrfmiddlewaretoken": client.cookies["csrftoken"]},
                           files={"log": (name, data, "text/xml")}, headers={"Referer": base + "/import/blokus/"})
        text = resp.text
        if resp.status_code == 302:
            return 302, resp.headers["location"]
        found = re.search(r'class="[^"]*(?:error|message)[^"]*"[^>]*>([^<]+)<', text)
        return resp.status_code, html.unescape(found.group(1).strip() if found else text[:120]).replace("\n", " ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parallel", type=int, default=12)
    args = parser.parse_args()
    arena = start_arena(env={"ARENA_IMPORTS_PER_MINUTE": "100000", "ARENA_TABLES_PER_MINUTE": "100000"})
    pid = arena.proc.pid
    try:
        httpx.get(arena.url + "/import/blokus/", timeout=30)
        time.sleep(1.0)
        before = rss_kib(pid)
        files = hostile_files()
        kinds = list(files)
        print(f"hostile files: " + ", ".join(f"{k} {len(v) / 1e6:.1f} MB" for k, v in files.items()))
        print(f"server RSS before:                          {before / 1024:7.1f} MiB")

        peak, sampling = [before], threading.Event()

        def sample() -> None:
            while not sampling.is_set():
                peak[0] = max(peak[0], rss_kib(pid))
                time.sleep(0.01)

        answers = [None] * args.parallel

        def send(i: int) -> None:
            kind = kinds[i % len(kinds)]
            answers[i] = (kind, *upload(arena.url, f"{kind}.xml", files[kind]))

        sampler = threading.Thread(target=sample)
        sampler.start()
        started = time.perf_counter()
        threads = [threading.Thread(target=send, args=(i,)) for i in range(args.parallel)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        took = time.perf_counter() - started
        time.sleep(2.0)
        sampling.set()
        sampler.join()
        after = rss_kib(pid)
        for kind, status, message in sorted(answers):
            print(f"  {kind:<8} {status}  {message[:110]}")
        print(f"{args.parallel} hostile uploads answered in {took:5.2f} s")
        print(f"server RSS peak while reading them:         {peak[0] / 1024:7.1f} MiB")
        print(f"server RSS 2 s after:                       {after / 1024:7.1f} MiB")
        status, where = upload(arena.url, "real.xml", REAL.read_bytes())
        print(f"a real replay ({REAL.stat().st_size / 1e3:.0f} kB): {status} {where}")
        print(f"server RSS after it:                        {rss_kib(pid) / 1024:7.1f} MiB")
    finally:
        arena.stop()
        shutil.rmtree(arena.data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
