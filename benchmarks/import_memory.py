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

``--hanablive``: instead, one valid hanab.live game file of about 4.5 MB whose notes are one
long string (the file a tester sent, which took the server from 132 to 681 MB), uploaded to
``/import/hanabi/`` ``--repeat`` times one after the other; printed: the server's memory
before, its peak while each was read, and after.  ``--server-root DIR`` runs the server of
another checkout (the same measurement before a change).

Run: ``.venv/bin/python benchmarks/import_memory.py [--parallel 12]``, or
``.venv/bin/python benchmarks/import_memory.py --hanablive [--repeat 3] [--server-root DIR]``.
"""
from __future__ import annotations

import argparse
import html
import json
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


def upload(base: str, name: str, data: bytes, game: str = "blokus") -> tuple[int, str]:
    """POST ``data`` as a log file of ``game``, as the import form does; (status, the page's
    message or the new match's address)."""
    with httpx.Client(base_url=base, timeout=120) as client:
        client.get(f"/import/{game}/")
        resp = client.post(f"/import/{game}/", data={"csrfmiddlewaretoken": client.cookies["csrftoken"]},
                           files={"log": (name, data, "application/octet-stream")},
                           headers={"Referer": base + f"/import/{game}/"})
        text = resp.text
        if resp.status_code == 302:
            return 302, resp.headers["location"]
        found = re.search(r'class="[^"]*(?:error|message)[^"]*"[^>]*>([^<]+)<', text)
        return resp.status_code, html.unescape(found.group(1).strip() if found else text[:120]).replace("\n", " ")


def hanablive_file() -> bytes:
    """A valid 2-player hanab.live game whose ``notes`` are one string of 4.5 million characters."""
    from games.hanabi import hanablive, rules

    state = rules.new_state(rules.normalize_config({"players": 2}), 9)
    while not state.is_terminal():  # discard the oldest card, or hint when the tokens are full
        seat = state.on_turn
        legal = state.legal_actions(seat)
        state.apply({seat: next((a for a in legal if a[0] == "discard"), legal[-1])})
    game = hanablive.export_game(["Alice", "Bob"], state.faces, state.history)
    game["notes"] = "x" * 4_500_000
    return json.dumps(game).encode()


def sampled_peak(pid: int, work) -> int:
    """Run ``work()``; the peak RSS (kB) of ``pid`` sampled every 10 ms meanwhile."""
    peak, done = [rss_kib(pid)], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss_kib(pid))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        work()
    finally:
        done.set()
        sampler.join()
    return peak[0]


def hanablive_main(args) -> None:
    """``--hanablive`` (module docstring)."""
    import os

    from tests import serverproc

    if args.server_root:
        serverproc.ROOT = Path(args.server_root).resolve()
    data = hanablive_file()
    arena = serverproc.start_arena(env={"ARENA_IMPORTS_PER_MINUTE": "100000", "ARENA_TABLES_PER_MINUTE": "100000"})
    pid = arena.proc.pid
    try:
        httpx.get(arena.url + "/import/hanabi/", timeout=30)
        time.sleep(1.0)
        before = rss_kib(pid)
        print(f"server {serverproc.ROOT}; a hanab.live file of {len(data) / 1e6:.1f} MB (one long string); "
              f"server RSS before {before / 1024:.0f} MiB; load average {os.getloadavg()[0]:.2f}")
        for i in range(1, args.repeat + 1):
            answer = []
            peak = sampled_peak(pid, lambda: answer.append(upload(arena.url, "game.json", data, "hanabi")))
            print(f"  import {i}: {answer[0][0]} {answer[0][1][:60]}; peak {peak / 1024:.0f} MiB "
                  f"(+{(peak - before) / 1024:.0f} MiB, {(peak - before) * 1024 / len(data):.1f} times the file)")
        time.sleep(2.0)
        print(f"server RSS 2 s after the last: {rss_kib(pid) / 1024:.0f} MiB")
    finally:
        arena.stop()
        shutil.rmtree(arena.data_dir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parallel", type=int, default=12)
    parser.add_argument("--hanablive", action="store_true", help="one long string in a valid hanab.live file")
    parser.add_argument("--repeat", type=int, default=3, help="--hanablive: imports one after the other")
    parser.add_argument("--server-root", help="--hanablive: run the server of this checkout")
    args = parser.parse_args()
    if args.hanablive:
        hanablive_main(args)
        return
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
