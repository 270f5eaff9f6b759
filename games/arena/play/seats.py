"""Seat endpoints: what a match runner talks to, whoever sits there.

A person in the browser, a bot over a protocol and a built-in bot look the same to a runner:
``ask`` sends the request at once and returns a future that resolves to an :class:`Answer`
before the seat's deadline (the endpoint itself enforces it), and ``notify`` passes on the
public happenings of a step.
"""
from __future__ import annotations

import asyncio
import random
import time
import weakref
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

from django.conf import settings

from games.base import Action, State


@dataclass(slots=True)
class Answer:
    """A seat's answer to one request.

    ``forced`` is True when the server chose ``action`` for the seat (timeout, malformed reply,
    disconnect, illegal move) and ``reason`` then says why in public facts only (everyone at
    the table sees it live); ``detail`` is the full explanation, which may name the seat's own
    hidden information (its hand) and goes live only to that seat; ``think_ms`` is
    request-to-answer time in milliseconds.
    """

    action: Action
    forced: bool = False
    reason: str = ""
    think_ms: float = 0.0
    detail: str = ""


class SeatEndpoint:
    """Base class.  Subclasses implement :meth:`ask`; the rest are optional hooks."""

    #: Shown in the lobby and the log when the seat has no better name.
    display_name: str = ""
    #: "human", "protocol" or "builtin" (matches ``Seat.Kind``).
    kind: str = "builtin"
    #: True once a connected bot has hung up, or a person has let ``HUMAN_ABSENT_AFTER``
    #: requests in a row run out (False again when they move): the seat has left the match.
    gone: bool = False
    #: A connecting bot's identity: the :class:`~games.arena.models.RegisteredBot` whose key it
    #: presented (:meth:`games.arena.play.arena.Arena.identify_bot`); None: it presented none
    #: (unverified), or it is not a connecting bot.
    bot_id: int | None = None
    #: Every seat's display name, in seat order (set by the arena when the match starts): a
    #: protocol that names the players (Hanabi's ``players``) reads them here.
    table_names: list[str] = []
    #: The table (match id) the arena seated this connected bot at, set with its seat while it
    #: waits for the start: the protocols' "which room" is then answered without asking the
    #: database (:meth:`~games.arena.play.seating.Seating.match_of_seat`).
    seated_at: int | None = None

    def use_think_time(self, seconds: float) -> None:
        """The table's thinking time per move (``Match.think_s``, seconds) replaces the game's
        default deadline for this seat's requests (``GameSpec.bot_deadline_setting``).  The
        arena calls it on bot seats (kind "protocol") before the match starts; each transport
        that enforces a deadline implements it.  By default nothing changes (a built-in bot
        answers at once; a person's deadline is the game's)."""

    def start(self, state: State, seat: int) -> None:
        """The match starts with ``state`` (before any request): e.g. a protocol's welcome."""

    def ask(self, state: State, seat: int, version: int) -> "asyncio.Future[Answer]":
        """Send the request for ``seat`` now; the future resolves by the deadline at the latest."""
        raise NotImplementedError

    def notify(self, state: State, seat: int, happenings: list[dict]) -> None:
        """The step's public happenings (e.g. a round's outcome), after they were applied."""

    def close(self, result: dict | None) -> None:
        """The match ended (``result``) or was aborted (``None``); release the connection."""


def resolved(answer: Answer) -> "asyncio.Future[Answer]":
    """A future that already holds ``answer`` (for seats that answer without waiting)."""
    fut = asyncio.get_running_loop().create_future()
    fut.set_result(answer)
    return fut


class TimedRequest:
    """One outstanding request with a deadline: the piece every waiting endpoint shares.

    ``resolve`` settles it once (later calls are ignored, as late replies are); at the deadline,
    ``deadline_s`` seconds of the loop's clock after it was made, it resolves to
    ``on_timeout()``.  The deadline is kept by the loop's :class:`Deadlines` of that length
    rather than a timer of its own.
    """

    __slots__ = ("future", "started", "key", "_on_timeout")

    def __init__(self, deadline_s: float, on_timeout: Callable[[], Answer], key: Any = None):
        loop = asyncio.get_running_loop()
        self.future: asyncio.Future[Answer] = loop.create_future()
        self.started = time.perf_counter()
        self.key = key
        self._on_timeout = on_timeout
        Deadlines.of(loop, deadline_s).add(self)

    def expire(self) -> None:
        """The deadline has come: resolve to ``on_timeout()`` unless settled already."""
        if not self.future.done():
            answer = self._on_timeout()
            answer.think_ms = (time.perf_counter() - self.started) * 1000
            self.future.set_result(answer)

    @property
    def pending(self) -> bool:
        return not self.future.done()

    def resolve(self, action: Action, forced: bool = False, reason: str = "", detail: str = "") -> bool:
        """Settle with an answer (``reason``/``detail`` as in :class:`Answer`); returns False if
        it was settled already."""
        if self.future.done():
            return False
        think = (time.perf_counter() - self.started) * 1000
        self.future.set_result(Answer(action, forced, reason, think, detail))
        return True


class Deadlines:
    """The deadlines of one length on one loop, and one timer for them.

    Requests with the same time to answer end in the order they were made, so they wait in a
    queue, each with the loop time it is due, and one timer at a time rings for the oldest one
    still open: at that moment it expires every request due (:meth:`TimedRequest.expire`) and
    sets itself for the next.  A request answered in time just stays in the queue until the
    front reaches it.  A timer of its own per request (a handle, a heap push, a cancel) was
    about a tenth of the loop's Python time per Liar's Dice move.
    """

    _of: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[float, Deadlines]]" = weakref.WeakKeyDictionary()
    #: The last loop asked for and its deadlines (a server has one loop; the weak dictionary's
    #: lookup makes a weak reference each time).
    _last: tuple = (None, {})

    def __init__(self, loop: asyncio.AbstractEventLoop, seconds: float):
        self.loop = loop
        self.seconds = seconds
        self.waiting: deque[tuple[float, TimedRequest]] = deque()  # (due, request), oldest first
        self.timer: asyncio.TimerHandle | None = None

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop, seconds: float) -> "Deadlines":
        """The deadlines of ``seconds`` on ``loop`` (made on first use)."""
        last_loop, per_loop = cls._last
        if last_loop is not loop:
            per_loop = cls._of.get(loop)
            if per_loop is None:
                per_loop = cls._of[loop] = {}
            cls._last = (loop, per_loop)
        deadlines = per_loop.get(seconds)
        if deadlines is None:
            deadlines = per_loop[seconds] = cls(loop, seconds)
        return deadlines

    def add(self, request: TimedRequest) -> None:
        """``request`` is due ``seconds`` from now."""
        waiting = self.waiting
        while waiting and waiting[0][1].future.done():  # answered: forget them now
            waiting.popleft()
        due = self.loop.time() + self.seconds
        waiting.append((due, request))
        if self.timer is None:
            self.timer = self.loop.call_at(due, self._ring)

    def _ring(self) -> None:
        waiting = self.waiting
        now = self.loop.time()
        while waiting:
            due, request = waiting[0]
            if due > now and not request.future.done():
                self.timer = self.loop.call_at(due, self._ring)
                return
            waiting.popleft()
            request.expire()  # (its on_timeout may add a request: behind this one, so no timer yet)
        self.timer = None


class BuiltinSeat(SeatEndpoint):
    """A built-in bot: ``policy(observation, legal_actions, rng) -> action``.

    ``delay_s`` makes it pause before answering so a person at the table can follow.
    """

    kind = "builtin"

    def __init__(self, name: str, policy: Callable[[dict, list, random.Random], Action], seed: int, delay_s: float = 0.0):
        self.display_name = name
        self.policy = policy
        self.rng = random.Random(seed)
        self.delay_s = delay_s

    def ask(self, state: State, seat: int, version: int) -> "asyncio.Future[Answer]":
        started = time.perf_counter()
        action = self.policy(state.observation(seat), state.legal_actions(seat), self.rng)
        answer = Answer(action, think_ms=(time.perf_counter() - started) * 1000)
        if self.delay_s <= 0:
            return resolved(answer)
        fut = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_later(self.delay_s, lambda: fut.done() or fut.set_result(answer))
        return fut


class HumanSeat(SeatEndpoint):
    """A person in the browser.  The runner publishes :attr:`request_info` in the seat's view;
    the browser's answer comes back through the channel layer to :meth:`act`.

    Deadlines and what silence means are the game's (``GameSpec.human_*``).  A person who
    leaves (:meth:`leave`) or lets ``HUMAN_ABSENT_AFTER`` requests in a row run out is
    :attr:`gone`: from then on each request is answered at once by the game's stand-in bot
    (``GameSpec.standin``), or as silence is when the game has none, recorded as forced with
    the reason, until they take the seat back (:meth:`come_back`, or any move).
    """

    kind = "human"

    def __init__(self, name: str, spec: "GameSpec"):  # noqa: F821  (registry imports us)
        self.display_name = name
        self.spec = spec
        self.request: TimedRequest | None = None
        self.request_info: dict | None = None
        #: Requests in a row that ran out with a forced answer (silence that loses something;
        #: letting a bid stand in Liar's Dice is a move, not an absence).
        self.silences = 0
        self.absent_after = settings.ARENA["HUMAN_ABSENT_AFTER"]
        self.left = False  # left on purpose (rather than away)
        self.rng = random.Random()  # the stand-in's; its moves are logged, replays need no seed

    def _standin_answer(self, state: State, seat: int) -> Answer:
        """The answer for a person who is gone: the stand-in bot's move, or silence's."""
        why = "left the match" if self.left else "away"
        if self.spec.standin:
            label, policy = self.spec.builtin_bots[self.spec.standin]
            action = policy(state.observation(seat), state.legal_actions(seat), self.rng)
            return Answer(action, True, f"{why}: played by {label}")
        silence = self.spec.human_timeout_answer(state, seat, 0)
        return Answer(silence.action, silence.forced, why if silence.forced else silence.reason)

    def leave(self, state: State, seat: int) -> None:
        """The person leaves the match: the stand-in plays from now on, the open request too."""
        self.left = self.gone = True
        if self.request is not None and self.request.pending:
            answer = self._standin_answer(state, seat)
            self.request.resolve(answer.action, answer.forced, answer.reason)
            self.request_info = None

    def come_back(self) -> None:
        """The person takes their seat back (from their next request on)."""
        self.left = self.gone = False
        self.silences = 0

    def _ran_out(self, answer: Answer) -> Answer:
        if answer.forced:
            self.silences += 1
            self.gone = self.silences >= self.absent_after
        return answer

    def ask(self, state: State, seat: int, version: int) -> "asyncio.Future[Answer]":
        auto = self.spec.human_auto_answer(state, seat)
        if auto is not None:
            self.request, self.request_info = None, None
            return resolved(auto)
        if self.gone:
            self.request, self.request_info = None, None
            return resolved(self._standin_answer(state, seat))
        kind, seconds = self.spec.human_prompt(state, seat)
        on_timeout = self.spec.human_timeout_answer(state, seat, seconds)
        self.request = TimedRequest(seconds, lambda: self._ran_out(on_timeout), key=version)
        self.request_info = {"version": version, "kind": kind, "seconds": seconds,
                             "deadline": time.time() + seconds}
        return self.request.future

    @property
    def open_request(self) -> dict | None:
        """The request the person can still answer (None once answered or timed out)."""
        return self.request_info if self.request is not None and self.request.pending else None

    def act(self, state: State, seat: int, version: int, action: Action) -> str | None:
        """Take the person's ``action`` for request ``version``; returns an error text or None."""
        req = self.request
        if req is None or not req.pending or req.key != version:
            return "That move is no longer open."
        if not self.spec.human_action_ok(state, seat, action):
            return "That is not a legal move now."
        req.resolve(action)
        self.request_info = None
        self.silences, self.gone = 0, False
        return None
