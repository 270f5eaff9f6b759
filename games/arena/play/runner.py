"""The match runner: the single owner of a match's state (docs/architecture.md, "The runner").

One asyncio task per match.  Each step it asks every seat that must act (their endpoints
enforce their own deadlines and the protocol's rule for bad answers), appends the answers to
the event log, applies them, forwards the happenings to the seats, and publishes versioned
views: the public one to spectators, each person's own one to that person.
"""
from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Callable, NamedTuple

import orjson

from games.arena.play.details import PUBLIC, may_see
from games.arena.play.eventlog import EventRow, EventWriter
from games.arena.play.replay import pack_snapshot
from games.arena.play.seats import Answer, HumanSeat, SeatEndpoint
from games.arena.play.tables import tell_apart
from games.arena.registry import GameSpec

log = logging.getLogger("arena.runner")


def public_group(match_id: int) -> str:
    """Channel-layer group of a match's spectators."""
    return f"m{match_id}.public"


def seat_group(match_id: int, seat: int) -> str:
    """Channel-layer group of the person at ``seat``."""
    return f"m{match_id}.seat{seat}"


def table_group(match_id: int) -> str:
    """Channel-layer group of everyone on a table's page (seat changes, start, end)."""
    return f"m{match_id}.table"


def view_message(body: dict) -> dict:
    """The channel-layer message carrying one view ``body`` to its audience.

    ``body`` (``{"type": "match.view", "version", "ts", "audience", "view", ...}``) is what the
    browser receives; it is JSON-encoded here, once, for everyone who gets it, and travels as
    ``"text"`` next to the routing fields.  Without this, every spectator's copy cost a deep
    copy in the channel layer and a ``json.dumps`` in its consumer: at 500 spectators, more
    CPU per view than the server had (see ``benchmarks/spectator_fanout.py``).
    """
    return {"type": "match.view", "version": body["version"], "ts": body["ts"], "audience": body["audience"],
            "text": view_text(body)}


def view_text(body: dict) -> str:
    """``body`` as JSON text: orjson (a tenth of the standard library's time), dict keys that
    are not strings written as strings, as ``json.dumps`` does; an integer past 64 bits, which
    orjson refuses, through ``json.dumps``."""
    try:
        return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return json.dumps(body)


#: Turns of the loop between a step's happenings and the next requests (see MatchRunner._show).
LOOP_TURNS_AFTER_HAPPENINGS = 2


class Told(NamedTuple):
    """What a step told that the next views carry: the rules' ``happenings``, the step's
    ``answers`` (as the spectators see them, :meth:`EventRow.told`; None: no step) and
    ``details`` (seat -> its answer's full explanation where the spectators may not see it,
    for the views that may: games/arena/play/details.py; else None)."""

    happenings: list
    answers: list | None
    details: dict | None


Told.NOTHING = Told([], None, None)


class MatchRunner:
    """Runs one match from its first step to its result.

    ``endpoints[i]`` sits at seat ``i``.  ``publish(group, message)`` is an async callable
    (the channel layer's ``group_send``); ``listening(group)`` (None: always True) says whether
    anyone may be in a group: no view is built for a group nobody is in, unless a resync asks
    for it (:meth:`latest_for`).  ``server_times`` (if given) receives, per step, the seconds
    from the last answer arriving to the next requests being sent.

    Every ``snapshot_every`` steps (0: never) the state is pickled into :attr:`snapshots`
    (``[(step, seq, bytes)]``, stored when the match ends; bounded by the configuration's
    bounds on a match's length).

    When every seat that is not a built-in bot is gone (``endpoint.gone``), nobody is left to
    play for and the match stops with :attr:`abandoned` True, at once when they all left for
    good (a bot hung up, a person pressed *Leave the match*: :meth:`human_leave` ends it before
    the step in hand is applied), but only after ``away_grace_s`` seconds when one of them is a
    person who is merely away (let their requests run out): meanwhile the stand-in plays, and
    taking a seat back cancels the countdown (0: at once too).

    A match that reaches ``max_steps`` steps (0: no bound) unfinished stops there with
    :attr:`cut_short` saying so: some rules set no end a hostile pair of bots must reach (Liar's
    Dice bids may raise the count by one up to 2**31 - 1, as on the reference), and the event
    log must not grow without one.

    :attr:`watchers` (server-side observers such as a protocol's admin clients) get every
    state: ``watcher.watch(state, happenings, answers)`` at the start and after every step,
    with the step's answers including their ``detail`` (a watcher is server code and decides
    what it passes on).  :meth:`pause` holds the match before its next request (the state is
    published first); :meth:`step_once` lets one step through while paused.

    ``pace_s`` (seconds, 0: full speed) is the table's pace: the least time from one step's
    requests to the next step's, so that people can watch bots that answer in microseconds
    (a 30-game table of built-in bots was over in 3 s).  The wait comes after a step is
    applied, so each view stays up at least that long; a pause, an interruption or an
    abandoned match cuts it short.  Time is :attr:`clock` (the loop's, in seconds).
    """

    def __init__(self, match_id: int, spec: GameSpec, config: dict, seed: int,
                 endpoints: list[SeatEndpoint], writer: EventWriter,
                 publish: Callable, omniscient: bool = False, round_pause_s: float = 0.0,
                 server_times: list | None = None, snapshot_every: int = 0, away_grace_s: float = 0.0,
                 max_steps: int = 0, listening: Callable[[str], bool] | None = None, pace_s: float = 0.0):
        self.match_id = match_id
        self.spec = spec
        self.state = spec.new_state(config, seed)
        self.endpoints = endpoints
        self.writer = writer
        self.publish = publish
        self.listening = listening or (lambda group: True)
        self.humans = {i for i, ep in enumerate(endpoints) if isinstance(ep, HumanSeat)}
        self.omniscient = omniscient and not self.humans
        self.round_pause_s = round_pause_s if self.humans else 0.0
        self.pace_s = pace_s
        self.server_times = server_times
        self.version = 0
        self.step = 0
        self.seq = 0
        #: What the newest version of the views told: (ts, happenings, answers, details), and
        #: its messages built so far, per audience (:meth:`latest_for`).
        self._told: tuple | None = None
        self._encoded: dict = {}
        self._public_group = public_group(match_id)
        self.seat_tags = [spec.seat_tag(config, i) for i in range(len(endpoints))]
        self._shown_names: list[str] | None = None  # the endpoints' names when _told_names was made
        self._told_names: list[str] = []
        self.snapshot_every = snapshot_every
        self.snapshots: list[tuple[int, int, bytes]] = []
        self.abandoned = False
        self.max_steps = max_steps
        #: Why the match stopped unfinished at :attr:`max_steps` (None while it has not).
        self.cut_short: str | None = None
        #: Seats that can leave: everyone but the built-in bots.
        self.leavers = [i for i, ep in enumerate(endpoints) if ep.kind != "builtin"]
        self.away_grace_s = away_grace_s
        #: Abandons the match when the grace runs out while everyone is still away; and when
        #: (epoch seconds), shown to the people away.
        self.away_timer: asyncio.TimerHandle | None = None
        self.abandon_at: float | None = None
        self.watchers: list = []
        self.started = False
        self.paused = False
        self._steps = 0  # steps let through while paused
        self._unpaused = asyncio.Event()
        #: Why the match stopped if it was cancelled (the arena records it as the abort reason).
        self.stop_reason: str | None = None
        self._asked: list = []  # the futures of the step in hand
        self._interrupted: tuple | None = None  # (seat, Answer) that ends the step in hand
        self._answered_at = 0.0  # when the last step's answers were in (perf_counter seconds)
        self._asked_at = 0.0  # when the last step's requests went out (clock seconds)

    # --- watchers, pause and step -------------------------------------------------------------
    def add_watcher(self, watcher) -> None:
        """Start passing every state to ``watcher``: the current one at once if the match has
        started, else its first when it starts."""
        self.watchers.append(watcher)
        if self.started:
            self._tell(watcher, [], None)

    def remove_watcher(self, watcher) -> None:
        if watcher in self.watchers:
            self.watchers.remove(watcher)

    def _tell(self, watcher, happenings: list[dict], answers: list | None) -> None:
        try:
            watcher.watch(self.state, happenings, answers)
        except Exception:  # one broken observer must not stop the match
            log.exception("match %s: a watcher failed; removed", self.match_id)
            self.remove_watcher(watcher)

    def interrupt(self, seat: int, answer) -> None:
        """End the step in hand with ``answer`` from ``seat``, asked or not: a protocol's rule
        that a player who leaves loses at once, out of turn too (Blokus: LEFT).  The asked
        seats' open requests are dropped (a later answer is ignored, as a late one is); the
        rules must accept the action from that seat.  Ignored when the match is over or
        another interruption is pending."""
        if self.state.is_terminal() or self._interrupted is not None:
            return
        self._interrupted = (seat, answer)
        dropped = Answer(None, True, "interrupted")
        for future in self._asked:
            if not future.done():
                future.set_result(dropped)
        self._wake()

    # --- nobody left to play for --------------------------------------------------------------
    def _everyone_gone(self) -> bool:
        return bool(self.leavers) and all(self.endpoints[i].gone for i in self.leavers)

    def _present(self) -> list[int]:
        """Seats that are not built-in bots and still play for themselves (not gone)."""
        return [i for i in self.leavers if not self.endpoints[i].gone]

    def _check_presence(self) -> None:
        """Abandon the match, start or cancel the away grace, as the seats' presence says (see
        the class docstring)."""
        if self.abandoned or self.state.is_terminal():
            return
        if not self._everyone_gone():
            if self.away_timer is not None:  # someone took their seat back in time
                self.close()
            return
        merely_away = any(isinstance(self.endpoints[i], HumanSeat) and not self.endpoints[i].left
                          for i in self.leavers)
        if not merely_away or self.away_grace_s <= 0:
            self._abandon()
        elif self.away_timer is None:
            self.away_timer = asyncio.get_running_loop().call_later(self.away_grace_s, self._grace_over)
            self.abandon_at = time.time() + self.away_grace_s

    def _grace_over(self) -> None:
        self.away_timer = self.abandon_at = None
        if self._everyone_gone():
            log.info("match %s: every player away for %g s", self.match_id, self.away_grace_s)
            self._abandon()

    def _abandon(self) -> None:
        """Stop now: the step in hand is dropped (its open requests answered as interrupted,
        nothing of it applied or logged) and :meth:`run` returns with :attr:`abandoned`."""
        self.abandoned = True
        self.close()
        dropped = Answer(None, True, "interrupted")
        for future in self._asked:
            if not future.done():
                future.set_result(dropped)
        self._wake()

    def pause(self, paused: bool) -> None:
        """Hold the match before its next request (``True``) or let it go on (``False``)."""
        self.paused = paused
        if not paused:
            self._steps = 0
        self._wake()

    def step_once(self) -> None:
        """While paused: let the next step (one round of requests and answers) through."""
        self._steps += 1
        self._wake()

    def _wake(self) -> None:
        self._unpaused.set()
        self._unpaused = asyncio.Event()

    async def _hold(self) -> None:
        """Wait while paused, unless a step was let through."""
        while self.paused and self._steps == 0 and self._interrupted is None and not self.abandoned:
            await self._unpaused.wait()
        if self.paused and self._interrupted is None and not self.abandoned:
            self._steps -= 1

    # --- views ------------------------------------------------------------------------------
    def _public_view(self) -> dict:
        """What spectators see: everything once the match is over; while it
        runs, the public view, or on an opted-in bots-only table the revealed view (hands no
        longer current).  Never a current secret: a seated bot may be watching."""
        if self.state.is_terminal():
            return self.state.full_observation()
        if self.omniscient:
            return self.state.revealed_observation()
        return self.state.public_observation()

    def _names(self) -> list[str]:
        """The seats' names as the views show them: a bot may name itself mid-match, and
        same names are told apart by seat.  The same list while no name changes (views share
        it and never change it)."""
        shown = [ep.display_name for ep in self.endpoints]
        if shown != self._shown_names:
            self._shown_names, self._told_names = shown, tell_apart(shown, self.seat_tags)
        return self._told_names

    async def _publish_views(self, happenings: list[dict], answers: list | None,
                             details: dict | None = None) -> None:
        """Publish the new version's views: the public one to spectators, each person's own
        one to that person; each only to a group someone is in (``listening``), so a table
        nobody watches builds no view until a resync asks for one (:meth:`latest_for`).
        ``happenings`` and ``answers`` (public facts only) go to everyone; ``details`` (seat ->
        the full forced-move explanation, which may name that seat's hand) is added to that
        seat's own answer in its own message only."""
        self._told = (time.time(), happenings, answers, details)
        self._encoded.clear()
        if self.listening(self._public_group):
            await self.publish(self._public_group, self.latest_for("public"))
        for seat in self.humans:
            group = seat_group(self.match_id, seat)
            if self.listening(group):
                await self.publish(group, self.latest_for(seat))

    def latest_for(self, audience) -> dict | None:
        """The newest version's view message for ``audience`` ("public" or a person's seat),
        as published and for a resync (None before the first view).  Built from the current
        state and what the version told, and encoded, once per version (a person's own once
        more after they answer its request).  That is the version's view: the state changes
        only in the runner's step, which publishes the next version before it awaits anything
        (a match stopped after a step, abandoned or too long, shows that step's state)."""
        if self._told is None or (audience != "public" and audience not in self.humans):
            return None
        message = self._encoded.get(audience)
        if message is None:
            message = self._encoded[audience] = view_message(self._view_body(audience))
        return message

    def _view_body(self, audience) -> dict:
        """The body of the newest version's view for ``audience`` ("public" or a person's
        seat).  Every view also says who is away (``away``: people whose seat is played for
        them), who still plays for themselves (``present``: seats that are not built-in bots
        and are not gone) and, while everyone is away, when the match will be abandoned
        (``abandon_at``, epoch seconds, else None)."""
        ts, happenings, answers, details = self._told
        state = self.state
        body = {"type": "match.view", "version": self.version, "ts": ts, "audience": audience,
                "view": None, "happenings": happenings, "answers": answers, "names": self._names(),
                # People who left or are away: their seat is played for them, and everyone sees it.
                "away": [seat for seat in self.humans if self.endpoints[seat].gone],
                # Who still plays for themselves: a person's page words its "Leave" dialog by
                # it; and when the match ends if nobody takes a seat back (everyone away).
                "present": self._present(), "abandon_at": self.abandon_at,
                # When each person must answer by (epoch seconds), so others see their countdown.
                "deadlines": {str(seat): self.endpoints[seat].open_request["deadline"]
                              for seat in self.humans if self.endpoints[seat].open_request}}
        if audience == "public":
            body["view"] = self._public_view()
            return body
        body["view"] = state.full_observation() if state.is_terminal() else state.observation(audience)
        if details:  # the details this audience may see (games/arena/play/details.py), in their answers
            body["answers"] = [dict(a, detail=details[a["seat"]]) if a["seat"] in details
                               and may_see(self.spec.slug, audience, seat=a["seat"]) else a for a in answers]
        body["request"] = None if state.is_terminal() else self.endpoints[audience].open_request
        return body

    # --- people -----------------------------------------------------------------------------
    async def human_leave(self, seat: int, back: bool = False) -> str | None:
        """The person at ``seat`` leaves the match (their seat is played as
        :class:`~games.arena.play.seats.HumanSeat` says) or, with ``back``, takes it back; the
        table hears of it at once.  When nobody else who is not a built-in bot still plays for
        themselves, leaving ends the match at once (:attr:`abandoned`); taking a seat back
        cancels the away grace.  Returns an error text or None."""
        ep = self.endpoints[seat] if 0 <= seat < len(self.endpoints) else None
        if not isinstance(ep, HumanSeat):
            return "You are not seated here."
        if self.abandoned or self.state.is_terminal():
            return "This match is over."
        if back:
            ep.come_back()
        else:
            ep.leave(self.state, seat)
        self._check_presence()
        if self.abandoned:
            return None  # the arena tells every page how the match ended
        await self._show(Told.NOTHING)
        return None

    async def human_action(self, seat: int, version: int, action) -> str | None:
        """A person's move from the browser; returns an error text, or None when accepted."""
        ep = self.endpoints[seat] if 0 <= seat < len(self.endpoints) else None
        if not isinstance(ep, HumanSeat):
            return "You are not seated here."
        error = ep.act(self.state, seat, version, action)
        if error is None:
            self._encoded.pop(seat, None)  # a reload now must not offer the answered request again
        return error

    # --- the loop ---------------------------------------------------------------------------
    async def run(self) -> dict:
        """Play the match to the end, or until it is :attr:`abandoned`; returns the rules'
        result.  Cancellation propagates (the caller marks the match aborted); every answer
        applied is already in the log.

        Each turn of the loop is one step, each concern one method: wait while paused
        (:meth:`_wait_if_paused`), ask the seats and publish the views that carry the requests
        (:meth:`_ask`), gather the answers or the interruption (:meth:`_answers`), log and
        apply them (:meth:`_apply`), stop when nobody is left or the match is too long
        (:meth:`_must_stop`), and give people a moment after a round (:meth:`_round_pause`).
        Every view goes out through :meth:`_show`, the one place that moves the version."""
        self._begin()
        told = Told.NOTHING  # what the last step told that no view has carried yet
        while not self.abandoned:
            actors = self.state.to_act()
            if actors and self.paused:
                told = await self._wait_if_paused(told)
                if self.abandoned:
                    break
            futures = await self._ask(actors, told)
            if not actors:
                break
            answers = await self._answers(actors, futures)
            if answers is None:
                break
            told = await self._apply(answers)
            if self._must_stop():
                break
            told = await self._round_pause(told)
            await self._keep_pace()
        return self.state.result()

    def _begin(self) -> None:
        """The match starts: every seat and watcher is told (before any request)."""
        self.started = True
        for seat, ep in enumerate(self.endpoints):
            ep.start(self.state, seat)
        for watcher in list(self.watchers):
            self._tell(watcher, [], None)

    async def _show(self, told: "Told", ask: Callable[[], None] | None = None) -> None:
        """Publish a new version of the views with ``told``; with ``ask``, the requests of that
        version go out too (``ask()``), before the views or after them (see below)."""
        self.version += 1
        # After a step with happenings (a round over), bots got them a moment ago (notify);
        # on a table without people (whose views carry their requests, so must follow them)
        # the views go out first, and in a game whose bots read one message at a time
        # (``spec.requests_read_apart``) the loop turns twice (its I/O is polled, and what it
        # read is handed on) before the next request is written, so that the request does not
        # reach a bot in the same TCP read as the happening: bots that parse one message per
        # read are common in courses, and work on the reference server.
        views_first = ask is not None and bool(told.happenings) and not self.humans
        if views_first:
            await self._publish_views(*told)
            if self.spec.requests_read_apart:
                for _ in range(LOOP_TURNS_AFTER_HAPPENINGS):
                    await asyncio.sleep(0)
        if ask is not None:
            ask()
        if not views_first:
            await self._publish_views(*told)

    async def _wait_if_paused(self, told: "Told") -> "Told":
        """Hold the match while it is paused (:meth:`pause`), showing the state it waits in
        first; returns what is still to be told."""
        if self._steps == 0:  # it will wait
            await self._show(told)
            told = Told.NOTHING
        await self._hold()
        return told

    async def _ask(self, actors: tuple[int, ...], told: "Told") -> list:
        """Ask ``actors`` for this step (none when an interruption already ended it) and show
        the views that carry the requests; returns the answers' futures."""
        futures: list = []

        def ask() -> None:
            self._asked_at = self.clock()
            if self._interrupted is None:
                futures.extend(self.endpoints[s].ask(self.state, s, self.version) for s in actors)
            self._asked = futures
            if self.server_times is not None and self.step:
                self.server_times.append(time.perf_counter() - self._answered_at)

        await self._show(told, ask)
        return futures

    async def _answers(self, actors: tuple[int, ...], futures: list) -> list[tuple[int, Answer]] | None:
        """The step's ``(seat, answer)`` pairs: the asked seats' answers, or only the
        interrupting seat's (:meth:`interrupt`); None when the match was abandoned meanwhile
        (the step is dropped: nobody is left to play it for)."""
        # Awaited one by one, not gathered: the runner then wakes once the last answer is in
        # (gather costs a turn of the loop more per step, to pass the results on).  The
        # futures never raise; a cancelled runner leaves the others to their deadlines.
        answers = [await future for future in futures]
        if self.abandoned:
            return None
        self._asked = []
        self._answered_at = time.perf_counter()
        if self._interrupted is not None:
            return [self._interrupted]
        return list(zip(actors, answers))

    async def _apply(self, answers: list[tuple[int, Answer]]) -> "Told":
        """Log the step's answers (waiting while the log is full), apply them, and pass the
        happenings to the seats and watchers; returns what the views must tell."""
        self.step += 1
        events = []
        for seat, answer in answers:
            self.seq += 1
            events.append(EventRow(self.match_id, self.seq, self.step, seat, answer.action,
                                   answer.forced, answer.reason, answer.think_ms, answer.detail))
            if answer.forced:
                log.info("match %s step %s seat %s forced: %s", self.match_id, self.step, seat, answer.reason)
        await self.writer.append(events)  # waits while the log is full (bounded memory)
        happenings = self.state.apply({seat: answer.action for seat, answer in answers})
        for seat, ep in enumerate(self.endpoints):
            ep.notify(self.state, seat, happenings)
        if self.watchers:
            told = [e.told(True) for e in events]
            for watcher in list(self.watchers):
                self._tell(watcher, happenings, told)
        if self.snapshot_every and self.step % self.snapshot_every == 0:
            self.snapshots.append((self.step, self.seq, pack_snapshot(self.state, self.seq)))
        # Details (a bot's debug hints, a refused move) in everyone's answers where the
        # spectators may see them (games/arena/play/details.py); else kept for the views that may.
        shown = [may_see(self.spec.slug, PUBLIC, seat=e.seat) for e in events]
        return Told(happenings, [e.told(public) for e, public in zip(events, shown)],
                    {e.seat: e.detail for e, public in zip(events, shown) if e.detail and not public} or None)

    def _must_stop(self) -> bool:
        """Whether the match stops unfinished after this step: nobody is left to play for
        (:attr:`abandoned`; the rest is not forfeited), or it reached :attr:`max_steps`
        (:attr:`cut_short`)."""
        self._check_presence()
        if self.abandoned:
            return True
        if self.max_steps and self.step >= self.max_steps and not self.state.is_terminal():
            self.cut_short = f"stopped after {self.step} steps, the most a match may have"
            return True
        return False

    async def _round_pause(self, told: "Told") -> "Told":
        """After a step that ends a round (``spec.pause_after``) at a table with people: show
        its outcome at once, then give them ``round_pause_s`` to read it before the next
        request; returns what is still to be told."""
        if (told.happenings and self.round_pause_s and not self.state.is_terminal()
                and self.spec.pause_after(told.happenings)):
            await self._show(told)
            await asyncio.sleep(self.round_pause_s)
            return Told.NOTHING
        return told

    def clock(self) -> float:
        """Now, in seconds of the loop's monotonic clock (the pace is measured on it)."""
        return asyncio.get_running_loop().time()

    async def _keep_pace(self) -> None:
        """Wait until ``pace_s`` seconds have passed since the step's requests went out
        (:attr:`clock`); at once when the match is over, abandoned or
        interrupted (a pause wakes it too; the loop then holds in :meth:`_hold`)."""
        while self.pace_s and not (self.abandoned or self._interrupted is not None or self.state.is_terminal()):
            left = self._asked_at + self.pace_s - self.clock()
            if left <= 0:
                return
            await self._nap(left)

    async def _nap(self, seconds: float) -> None:
        """Sleep ``seconds``, or less when :meth:`_wake` rings (pause, step, interrupt, abandon)."""
        try:
            await asyncio.wait_for(self._unpaused.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    def close(self) -> None:
        """Release what the runner holds after :meth:`run` (returned, raised or was cancelled):
        the away grace's timer."""
        if self.away_timer is not None:
            self.away_timer.cancel()
        self.away_timer = self.abandon_at = None
