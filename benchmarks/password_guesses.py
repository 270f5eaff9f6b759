"""How many password guesses one address gets, at the two doors that take passwords.

What it measures
    A real server (``manage.py serve``, as the README starts it, SQLite, the default limits)
    and, from loopback, for ``--seconds`` each:

    * **Blokus admin**: ``--clients`` threads connecting to the Blokus port again and again,
      each time ``<authenticate>`` with a wrong password.  Printed: attempts a second, and how
      many were *compared* ("authentication failed") rather than refused unread during the
      address's wait ("too many failed attempts").
    * **Web login**: ``--clients`` threads posting a wrong password to ``/accounts/login/``
      as fast as answers come, each for another username.  Printed: attempts a second, how
      many were checked (200: a password hash) and how many refused (429: no hash).

Bar: a handful of checked guesses a minute per address, however many attempts.  Run:
``.venv/bin/python benchmarks/password_guesses.py [--seconds 10] [--clients 8]``.
"""
from __future__ import annotations

import argparse
import http.cookiejar
import re
import shutil
import socket
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.serverproc import start_arena  # noqa: E402


def blokus_guesser(port: int, stop: threading.Event, counts: Counter, lock: threading.Lock) -> None:
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(b'<protocol><authenticate password="guess"/>')
                answer = b""
                while b"</protocol>" not in answer:
                    chunk = sock.recv(4096)
                    if not chunk:
                        break
                    answer += chunk
        except OSError:
            answer = b""
        kind = ("compared" if b"authentication failed" in answer
                else "refused unread" if b"too many failed attempts" in answer else "other")
        with lock:
            counts[kind] += 1


def login_guesser(base: str, index: int, stop: threading.Event, counts: Counter, lock: threading.Lock) -> None:
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    with opener.open(base + "/accounts/login/", timeout=10) as resp:
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', resp.read().decode()).group(1)
    n = 0
    while not stop.is_set():
        n += 1
        data = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "username": f"victim{index}-{n}",
                                       "password": "guess"}).encode()
        request = urllib.request.Request(base + "/accounts/login/", data=data,
                                         headers={"Referer": base + "/accounts/login/"})
        try:
            with opener.open(request, timeout=30) as resp:
                status = resp.status
        except urllib.error.HTTPError as exc:
            status = exc.code
        with lock:
            counts[{200: "checked (a hash)", 429: "refused (429, no hash)"}.get(status, f"HTTP {status}")] += 1


def run(label: str, target, args_of, clients: int, seconds: float) -> None:
    stop, counts, lock = threading.Event(), Counter(), threading.Lock()
    threads = [threading.Thread(target=target, args=(*args_of(i), stop, counts, lock), daemon=True)
               for i in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join(30)
    elapsed = time.perf_counter() - started
    total = sum(counts.values())
    print(f"{label}: {total} attempts in {elapsed:.1f} s ({total / elapsed:.0f}/s) from {clients} clients")
    for kind, n in sorted(counts.items()):
        print(f"  {kind:<26} {n:7d}  ({60 * n / elapsed:.1f} a minute)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    server = start_arena(env={"LOG_LEVEL": "ERROR"})
    try:
        run("Blokus <authenticate>", blokus_guesser, lambda i: (server.blokus_port,), args.clients, args.seconds)
        run("POST /accounts/login/", login_guesser, lambda i: (server.url, i), args.clients, args.seconds)
    finally:
        server.stop()
        shutil.rmtree(server.data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
