"""Start the arena the way the README does (``manage.py serve``), on free ports and a fresh
data directory, for tests and benchmarks that talk to it over real sockets."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A TCP port nobody listens on right now (127.0.0.1)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """The CPU time (seconds, to the nanosecond) process ``pid`` has used so far, all its
    threads: its process CPU clock, whose id is made as glibc's ``clock_getcpuclockid`` makes
    it (Linux).  Raises ``OSError`` when there is no such process."""
    return time.clock_gettime((~pid << 3) | 2)  # MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)


def server_clock(proc: subprocess.Popen):
    """A clock for :func:`wait_until` that runs only while ``proc`` (a server) runs on a CPU:
    a wait for something the server does (start, play 500 steps) then bounds the work it may
    spend on it, however busy the machine is.  Raises ``AssertionError`` once ``proc`` has
    exited (nothing more will come)."""
    def clock() -> float:
        code = proc.poll()
        if code is not None:
            raise AssertionError(f"the server exited ({code})")
        try:
            return cpu_seconds(proc.pid)
        except OSError:  # exited between the poll and the read
            raise AssertionError(f"the server exited ({proc.wait()})") from None
    return clock


#: Waits counted on a :func:`server_clock` also give up after this many seconds of wall
#: time: a server blocked (not busy) never spends its CPU budget.
STUCK_AFTER_S = 300.0


def wait_for_port(port: int, timeout: float = 30.0, proc: subprocess.Popen | None = None) -> None:
    """Block until something accepts connections on 127.0.0.1:``port``; raise ``TimeoutError``
    after ``timeout`` seconds, or at once when ``proc`` (the server that should listen) has
    exited.  With ``proc`` the timeout counts its CPU time (:func:`server_clock`): starting
    costs the same work on a busy machine, only later."""
    clock = server_clock(proc) if proc is not None else time.monotonic
    try:
        wait_until(lambda: _accepts(port), timeout, f"a listener on port {port}", clock=clock)
    except AssertionError as exc:
        raise TimeoutError(str(exc)) from None


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_until(predicate, timeout: float = 10.0, what: str = "condition", interval: float = 0.05,
               clock=time.monotonic):
    """Poll ``predicate`` until it returns something truthy (returned); raise ``AssertionError``
    naming ``what`` after ``timeout`` seconds of ``clock`` (default: wall time; a
    :func:`server_clock` counts the server's CPU time, and then :data:`STUCK_AFTER_S` of
    wall time is the limit too)."""
    deadline = clock() + timeout
    stuck_at = time.monotonic() + STUCK_AFTER_S if clock is not time.monotonic else float("inf")
    while True:
        value = predicate()
        if value:
            return value
        if clock() > deadline:
            unit = "s" if clock is time.monotonic else "s of the server's CPU time"
            raise AssertionError(f"timed out after {timeout} {unit} waiting for {what}")
        if time.monotonic() > stuck_at:
            raise AssertionError(f"timed out after {STUCK_AFTER_S} s waiting for {what} (the server is stuck)")
        time.sleep(interval)


@dataclass
class ArenaProcess:
    """A running ``manage.py serve``: its URL, bot ports, log file and environment."""

    proc: subprocess.Popen
    http_port: int
    liars_dice_port: int
    data_dir: Path
    log_path: Path
    env: dict = field(default_factory=dict)
    blokus_port: int = 0
    hanabi_port: int = 0
    #: Contract bridge's two doors: the text protocol and the Blue Chip table manager.
    bridge_port: int = 0
    table_manager_port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def clock(self):
        """This server's CPU time as a clock for :func:`wait_until` (:func:`server_clock`)."""
        return server_clock(self.proc)

    def shell(self, script: str, timeout: float = 60.0) -> str:
        """Run ``script`` with ``manage.py shell -c`` against this server's database (its
        environment); returns what it printed.  Raises ``AssertionError`` with its stderr
        when it fails (test data made for a browser test)."""
        out = subprocess.run([sys.executable, str(ROOT / "manage.py"), "shell", "-c", script], cwd=ROOT,
                             env=self.env, capture_output=True, text=True, timeout=timeout)
        assert out.returncode == 0, out.stderr
        return out.stdout

    def stop(self, timeout: float = 15.0) -> int:
        """SIGINT (as Ctrl-C), then wait; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(2)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def start_arena(role: str = "all", env: dict | None = None, data_dir: Path | None = None,
                http_port: int | None = None, liars_dice_port: int | None = None,
                blokus_port: int | None = None, hanabi_port: int | None = None) -> ArenaProcess:
    """Start ``manage.py serve --role ROLE`` and wait until its ports accept connections.

    ``env`` overrides settings (e.g. ``ARENA_HUMAN_DEADLINE``); by default the database is a
    fresh SQLite file in ``data_dir`` and the channel layer in memory.  Ports left to it are
    free ones; one taken between choosing and listening (another program's connection got it
    as its own port) makes it try again with new ones, up to three times.
    """
    for attempt in range(3):
        try:
            return _start_once(role, env, data_dir, http_port, liars_dice_port, blokus_port, hanabi_port)
        except PortTaken:
            if attempt == 2 or (http_port and liars_dice_port and blokus_port and hanabi_port):
                raise


class PortTaken(RuntimeError):
    """The server could not listen: a port chosen for it was taken in the meantime."""


def _start_once(role, env, data_dir, http_port, liars_dice_port, blokus_port, hanabi_port) -> ArenaProcess:
    data_dir = Path(data_dir or tempfile.mkdtemp(prefix="arena-test-"))
    http_port = http_port or free_port()
    liars_dice_port = liars_dice_port or free_port()
    blokus_port = blokus_port or free_port()
    hanabi_port = hanabi_port or free_port()
    bridge_port, table_manager_port = free_port(), free_port()
    full_env = dict(os.environ)
    full_env.update({"ARENA_DATA_DIR": str(data_dir), "ARENA_HTTP_PORT": str(http_port),
                     "LIARS_DICE_PORT": str(liars_dice_port), "BLOKUS_PORT": str(blokus_port),
                     "HANABI_PORT": str(hanabi_port), "BRIDGE_PORT": str(bridge_port),
                     "BRIDGE_TABLE_MANAGER_PORT": str(table_manager_port), "BRIDGE_TABLE_MANAGER_PAUSE": "0",
                     "PYTHONUNBUFFERED": "1"})
    full_env.pop("DJANGO_SETTINGS_MODULE", None)
    full_env.update(env or {})
    log_path = data_dir / f"serve-{role}-{http_port}.log"
    proc = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "serve", "--role", role],
                            cwd=ROOT, env=full_env, stdout=open(log_path, "wb"), stderr=subprocess.STDOUT)
    arena = ArenaProcess(proc, http_port, liars_dice_port, data_dir, log_path, full_env, blokus_port, hanabi_port,
                         int(full_env["BRIDGE_PORT"]), int(full_env["BRIDGE_TABLE_MANAGER_PORT"]))
    try:
        if role in ("all", "web"):
            wait_for_port(http_port, proc=proc)
        if role in ("all", "arena"):
            wait_for_port(liars_dice_port, proc=proc)
            wait_for_port(blokus_port, proc=proc)
            wait_for_port(hanabi_port, proc=proc)
            wait_for_port(arena.bridge_port, proc=proc)
            wait_for_port(arena.table_manager_port, proc=proc)
    except TimeoutError:
        arena.stop()
        error = PortTaken if "Address already in use" in arena.log() else RuntimeError
        raise error("server did not start:\n" + arena.log())
    return arena
