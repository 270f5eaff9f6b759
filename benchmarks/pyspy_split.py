"""py-spy on a server during a benchmark, and the split of its busy samples by layer (issue 25:
where the time that the floors do not explain goes).

:class:`Sampler` runs ``py-spy record`` on a process (raw "collapsed" stacks, busy threads
only, 1,000 samples a second) until :meth:`Sampler.stop`; :func:`split` files each sample
under the layer of its innermost frame that belongs to one (:data:`LAYERS`: the code running
at that moment, whoever called it), except that a sample of the event log's code, or of an
executor's worker thread (the database work of seating and results), goes to that thread's
own line whatever it was doing; :func:`report` prints the shares.

py-spy is found on ``$PATH``, beside this Python (``.venv/bin``), or at ``$PY_SPY``
(``pip install py-spy`` installs it); without it :meth:`Sampler.start` returns None and the
benchmark says so.  It runs on the CPU given (the clients' CPU, not the server's).
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

#: (layer, substrings of a frame's file name), in the order they are tried on each frame.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("rules (rules.py)", ("hanabi/rules.py", "blokus/rules.py", "liars_dice/rules.py", "jass/rules.py",
                          "bridge/rules.py")),
    ("codec (the game's protocol.py)", ("hanabi/protocol.py", "blokus/protocol.py", "liars_dice/protocol.py")),
    ("endpoint (the game's transport.py)", ("hanabi/transport.py", "blokus/transport.py",
                                            "liars_dice/transport.py")),
    ("runner (runner.py)", ("arena/play/runner.py",)),
    ("seats, requests, deadlines (seats.py)", ("arena/play/seats.py",)),
    ("arena transport (connections, framing)", ("arena/bots/transport.py",)),
    ("bot sockets (bot_sockets.py)", ("arena/bots/bot_sockets.py",)),
    ("arena: other (arena.py, tables, lobby, consumers)", ("games/arena/", "games/", "webapp/")),
    ("our Daphne glue (serve.py: send_text_now, bounds)", ("commands/serve.py",)),
    ("database (Django ORM, sqlite3)", ("django/db/", "sqlite3/")),
    ("Django: other", ("django/",)),
    ("Channels", ("channels/",)),
    ("Daphne", ("daphne/",)),
    ("autobahn, txaio", ("autobahn/", "txaio/")),
    ("Twisted", ("twisted/",)),
    ("asgiref", ("asgiref/",)),
    ("asyncio (the loop, transports)", ("asyncio/",)),
]
#: Innermost frames of a thread that waits (py-spy's own idle test does not see these waits
#: in this container): a lock or condition, an executor's idle worker, the loop's ``epoll``.
WAITING = ("Condition.wait (threading.py", "Event.wait (threading.py", "_wait_for_tstate_lock (threading.py",
           "_worker (concurrent/futures/thread.py", "Queue.get (queue.py", "select (selectors.py")
IDLE = "waiting (a lock, an idle worker, the loop's epoll)"
EVENT_LOG = "event log (its thread, and the hand-off on the loop)"
EXECUTOR = "executor threads (database work of setup and end)"


def py_spy() -> str | None:
    """The py-spy executable, or None."""
    for candidate in (os.environ.get("PY_SPY"), shutil.which("py-spy"), str(Path(sys.executable).parent / "py-spy")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


class Sampler:
    """``py-spy record`` on ``pid`` from :meth:`start` to :meth:`stop`."""

    def __init__(self, pid: int, cpu: int | None = None, rate: int = 1000):
        self.pid, self.cpu, self.rate = pid, cpu, rate
        self.proc: subprocess.Popen | None = None
        self.out = Path(tempfile.mkdtemp(prefix="pyspy-")) / "stacks.txt"

    def start(self) -> "Sampler | None":
        """Start sampling; returns None (and samples nothing) when py-spy is not installed."""
        exe = py_spy()
        if exe is None:
            return None
        command = [exe, "record", "--pid", str(self.pid), "--rate", str(self.rate), "--format", "raw",
                   "--output", str(self.out)]
        if self.cpu is not None:
            command = ["taskset", "-c", str(self.cpu)] + command
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        return self

    def stop(self) -> Counter:
        """Stop sampling; returns the samples per layer (:func:`split`)."""
        self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        if not self.out.exists():
            raise RuntimeError(f"py-spy wrote nothing: {err.decode(errors='replace')[-400:]}")
        lines = self.out.read_text().splitlines()
        shutil.rmtree(self.out.parent, ignore_errors=True)
        return split(lines)


def layer_of(frames: list[str]) -> str:
    """The layer of one sample's stack (``frames`` outermost first, each ``function (file:line)``);
    :data:`IDLE` for a thread that waits."""
    if any(frames[-1].startswith(wait) or f".{wait}" in frames[-1] for wait in WAITING):
        return IDLE
    if any("arena/play/eventlog.py" in f for f in frames):
        return EVENT_LOG
    if any("concurrent/futures/thread.py" in f for f in frames):
        return EXECUTOR
    for frame in reversed(frames):
        for layer, parts in LAYERS:
            if any(part in frame for part in parts):
                return layer
    return "other (stdlib, threading, the interpreter)"


def split(lines: list[str]) -> Counter:
    """Samples per layer from py-spy's raw output (``frame;frame;... count`` per line)."""
    samples: Counter = Counter()
    for line in lines:
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            samples[layer_of(stack.split(";"))] += int(count)
    return samples


def report(samples: Counter, what: str) -> None:
    """Print the shares of the busy ``samples`` (largest first; the waiting ones apart)."""
    idle = samples.get(IDLE, 0)
    total = sum(samples.values()) - idle
    print(f"  py-spy on {what}: {total} busy samples (1 kHz, every thread; {idle} more waiting); "
          f"share by layer (innermost frame):")
    for layer, n in samples.most_common():
        if layer != IDLE:
            print(f"    {n / total:6.1%}  {layer}")
