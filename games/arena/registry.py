"""The games the arena knows, each described by a subclass of :class:`GameSpec`.

The arena core is game-agnostic: everything it needs to know about a game is in that game's
``GameSpec`` subclass, in five sections a maintainer reads in this order:

1. **Rules and configuration**: ``slug``, ``title``, the create-table form's
   ``config_fields``, ``builtin_bots``, ``hidden_information``; ``new_state``,
   ``normalize_config``, ``num_seats``, ``limit_config``, ``auto_config``, and the form's
   :meth:`GameSpec.table_config` built on them.
2. **People**: who plays for or against a person (``standin``, ``strongest_bot``), where a
   person sits unless they choose (``person_seat``) and what a
   person is asked and what their silence means (``human_auto_answer``, ``human_prompt``,
   ``human_timeout_answer``, ``human_action_ok``).
3. **Bot access**: ``doors``, each a :class:`Door` (its name, "tcp", "websocket" or "http",
   its host and port settings, its protocol page, the lobby's note and how the arena starts
   taking bots there), the default time a bot has per move (``bot_deadline_setting``,
   :meth:`GameSpec.bot_deadline`), ``listener_settings_problem``; for an "http" door
   ``http_bot_endpoint`` and ``http_bot_probe``.
4. **Files and analysis**: ``exports`` and ``export``; ``import_formats``, ``import_encodings``,
   ``import_accept`` and ``import_match``; ``external_replay_label`` and ``external_replay_url``;
   ``analysis_label``, ``analysis_template``, ``analysis_subjects`` and ``analyse`` (what the
   arena computes after a match: games/arena/play/analyses.py).
5. **Presentation**: ``seats_note``, ``seat_label``, ``seat_tag``, ``teams``,
   ``describe_config`` (:meth:`GameSpec.config_summary`), ``pause_after``.

Plain values are class attributes, behaviour is methods (a hook that is only an existing
function may name it: ``new_state = staticmethod(rules.new_state)``).  The base class gives
every optional one a default and raises ``NotImplementedError`` for what each game must say.

**What a game lacks.**  A game says which optional capabilities it has in plain class
attributes, and the arena reads those, never whether a method is there:

- ``doors``: empty: built-in bots only; a "tcp" or "websocket" door
  (:attr:`GameSpec.listens`): the arena calls its ``start``; an "http" door
  (:attr:`GameSpec.calls_bots`): ``http_bot_endpoint`` and ``http_bot_probe`` are called;
- ``import_formats``: empty: the game reads no log files (``import_match`` is not called);
- ``exports``: empty: no downloads (``export`` is not called);
- ``external_replay_label``: "": no other site replays it (``external_replay_url`` is not called);
- ``analysis_label``: "": nothing is analysed after a match (``analysis_subjects`` and
  ``analyse`` are not called);
- ``standin``, ``strongest_bot``: None: no such bot.

The base's methods behind a capability a game lacks raise ``NotImplementedError``.  Hooks whose
answer may be "none" return that by default and are always called: ``teams`` (None: each seat
plays for itself), ``limit_config`` (no limit), ``listener_settings_problem`` (None: safe),
``human_auto_answer`` (None: ask).

Each game subclasses ``GameSpec`` in ``games/<game>/game.py`` and registers one instance there
(``SPEC = register(LiarsDiceSpec())``).  Each game is a Django app whose ``AppConfig.ready``
imports that module (see :func:`register`).
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Awaitable, Callable, Collection, Mapping

from django.conf import settings

from games.base import Action, State
from games.arena.play.seats import Answer

class AnalysisBusy(RuntimeError):
    """Raised by :meth:`GameSpec.analyse` when it cannot take the work now (its workers' queue
    is full): the part stays pending and the arena tries again later, not counting a try."""


#: How bots come through a :class:`Door` (its ``access``).
DOOR_ACCESS = ("tcp", "websocket", "http")


@dataclass(frozen=True)
class Door:
    """One way outside bots reach a game's seats (a game may have several: bridge takes its
    own text protocol on one port and the Blue Chip table manager's on another).

    ``access``: "tcp" (bots connect to ``host_setting``:``port_setting``, keys of
    ``settings.ARENA``; ``host_setting`` "" or unset: ``ARENA_HOST``), "websocket" (bots open
    a WebSocket there, any path, served by ``manage.py serve``: games/arena/bots/bot_sockets.py)
    or "http" (the server calls registered bot services: :meth:`GameSpec.http_bot_endpoint`;
    no host or port).  ``name``: what the lobby calls the door where a game has several
    (e.g. "Blue Chip table manager").  ``protocol_page``: the address of the protocol's
    description, or "".  ``note``: the lobby's line for bot authors (``{host}``, ``{port}``:
    the door's address).  ``start``: ``await start(arena)`` starts taking bots at this door
    in ``arena`` (games/arena/play/arena.py) and returns an object whose ``close()`` stops it;
    it raises ``OSError`` when the port cannot be listened on.  None for an "http" door.
    """

    name: str
    access: str
    host_setting: str = ""
    port_setting: str = ""
    protocol_page: str = ""
    note: str = ""
    start: Callable[[Any], Awaitable[Any]] | None = None

    @property
    def listens(self) -> bool:
        """Whether bots connect to the arena here (a "tcp" or "websocket" door)."""
        return self.access in ("tcp", "websocket")

    def address(self) -> tuple[str, int]:
        """``(host, port)`` the door listens on, from the settings in force: the host as
        bound (``0.0.0.0`` included).  Only for a door that :attr:`listens`."""
        host = settings.ARENA.get(self.host_setting) if self.host_setting else None
        return str(host if host is not None else settings.ARENA["HOST"]), int(settings.ARENA[self.port_setting])


@dataclass(frozen=True)
class ConfigField:
    """One setting on the create-table form: a whole number from ``minimum`` to ``maximum``;
    with ``kind="bool"`` an on/off box (sent to the rules as True/False); with
    ``kind="choice"`` one of ``choices`` (``(value, label)`` pairs; ``default`` is a value,
    ``minimum``/``maximum`` are unused)."""

    key: str
    label: str
    minimum: int
    maximum: int
    default: Any
    kind: str = "int"
    choices: tuple[tuple[str, str], ...] = ()

    @property
    def widest(self) -> Any:
        """The value that gives the most seats (the form shows that many seat choices)."""
        return self.maximum if self.kind == "int" else self.default


class GameSpec:
    """Everything game-specific the arena and the web layer need; each game subclasses it
    (module docstring: the five sections, and how a game says it lacks a capability)."""

    # ---- Rules and configuration ---------------------------------------------------------

    #: The game's key in URLs, settings' prefixes and ``Match.game``, e.g. "liars_dice".
    slug: str
    #: The game's name on pages, e.g. "Liar's Dice".
    title: str
    #: The create-table form's settings, in the form's order.
    config_fields: tuple[ConfigField, ...] = ()
    #: name -> (label, ``policy(observation, legal_actions, rng) -> action``).
    builtin_bots: Mapping[str, tuple[str, Callable[..., Action]]] = MappingProxyType({})
    #: False for games where everyone may see everything (Blokus): a forced move's or an
    #: annotated move's ``detail`` (e.g. a bot's debug hints) then goes to everyone live, and
    #: pages do not speak of hidden hands.
    hidden_information: bool = True

    def new_state(self, config: Mapping, seed: int) -> State:
        """The first state of a match with this normalized configuration, dealt from ``seed``."""
        raise NotImplementedError

    def normalize_config(self, config: Mapping) -> dict:
        """``config`` with defaults filled in and values checked as the rules accept them
        (wider than the form's bounds: stored and imported matches replay through them).
        Raises ``ValueError`` naming the setting."""
        raise NotImplementedError

    def num_seats(self, config: Mapping) -> int:
        """Seats at a table with this normalized configuration."""
        raise NotImplementedError

    def limit_config(self, config: Mapping) -> None:
        """Raises ``ValueError`` (a message for the form) when a table with this normalized
        configuration would make a match too long to keep and replay; the fields' own bounds
        are checked by :meth:`table_config`.  By default: no limit."""

    def auto_config(self) -> dict:
        """The automatic table's configuration (from settings; the rest defaults).  By
        default: the rules' defaults."""
        return {}

    def table_config(self, config: Mapping) -> dict:
        """The normalized configuration of a new table, within the create-table form's bounds.

        The rules accept wider configurations (stored and imported matches replay through
        them); a new table must stay inside each :class:`ConfigField`'s ``minimum`` ..
        ``maximum`` and pass :meth:`limit_config`, whatever the request says, so no request
        makes a match too long to keep and replay.
        Raises ``ValueError`` naming the setting.
        """
        config = self.normalize_config(config)
        for f in self.config_fields:
            value = config.get(f.key)
            if f.kind == "int" and isinstance(value, int) and not f.minimum <= value <= f.maximum:
                raise ValueError(f"{f.label} must be from {f.minimum} to {f.maximum}.")
            if f.kind == "choice" and value not in dict(f.choices):
                raise ValueError(f"{f.label}: choose one of {', '.join(label for _, label in f.choices)}.")
        self.limit_config(config)
        return config

    #: A cooperative game (Hanabi): everyone scores together, so nobody is rated; its
    #: leaderboard shows score statistics per player count instead.
    cooperative: bool = False
    #: The built-in bot whose rating stays at openskill's defaults (μ 25, σ 25/3) for ever:
    #: the fixed point every other rating of the game is measured against (ratings/rating.py).
    rating_anchor: str | None = "random"

    def rating_ranks(self, config: Mapping, result: Mapping) -> list[int] | None:
        """Each seat's rank in a finished match with this ``result`` (1 best; equal ranks for
        a tie; partners share their team's), or None when the match is not rated.  By default
        by ``result["scores"]``, higher better; None for a :attr:`cooperative` game."""
        scores = result.get("scores")
        if self.cooperative or not isinstance(scores, list) or not scores:
            return None
        return [1 + sum(other > score for other in scores) for score in scores]

    # ---- People: prompts, timeouts, stand-ins --------------------------------------------

    #: The built-in bot that plays for a person who left or is away (Jass: partners should
    #: not suffer); None plays their seat as a silent bot (each request answered at once as
    #: :meth:`human_timeout_answer` says: in Liar's Dice a lost round, as the reference does
    #: with a disconnected bot).
    standin: str | None = None
    #: The built-in bot that plays best, which the lobby's "Play a bot now" seats against a
    #: person (every other seat of the game's default table); None: no such button.
    strongest_bot: str | None = None
    #: The seat a person takes unless they choose another ("Me" on the create-table form,
    #: "Play a bot now"): where the game's table draws its own player, so the label and the
    #: drawing agree (Jass draws you at the bottom: South).  By default the first seat.
    person_seat: int = 0

    def human_auto_answer(self, state: State, seat: int) -> Answer | None:
        """An :class:`Answer` when a person has no real choice (the request is then not
        shown), else None.  By default: None, always ask."""
        return None

    def human_prompt(self, state: State, seat: int) -> tuple[str, float]:
        """``(kind, seconds)`` of the request shown to a person: what they are asked (the
        game's script draws it) and their deadline."""
        raise NotImplementedError

    def human_timeout_answer(self, state: State, seat: int, seconds: float) -> Answer:
        """The :class:`Answer` recorded when a person says nothing within ``seconds``."""
        raise NotImplementedError

    def human_action_ok(self, state: State, seat: int, action: Action) -> bool:
        """Whether a person's action is accepted (a bad click is refused, not punished)."""
        raise NotImplementedError

    # ---- Bot access: doors, listeners, HTTP endpoint -------------------------------------

    #: How outside bots reach the game's seats, in the lobby's order (:class:`Door`); empty:
    #: built-in bots only.
    doors: tuple[Door, ...] = ()
    #: Whether the next request must not reach a bot in the same read as a round's news
    #: (:class:`~games.arena.play.runner.MatchRunner` turns the loop in between): a line protocol
    #: whose reference server's bots commonly parse one message per read (Liar's Dice).  An
    #: XML stream or WebSocket frames need no such gap.
    requests_read_apart: bool = False
    #: Whether the protocol tells players apart by name (Hanabi's ``target_player``, its
    #: ``players`` list): a second player of a name already at the table is refused, a bot
    #: as the original refuses it (``PLAYER_ALREADY_EXISTS``), a person on the web form.
    unique_names: bool = False
    #: The ``settings.ARENA`` key of the seconds a bot has per move by default (e.g.
    #: ``"HANABI_BOT_DEADLINE"``); a table's own thinking time (``Match.think_s``, the
    #: create-table form) replaces it for that match (:meth:`SeatEndpoint.use_think_time`).
    #: "": the game's bots have no deadline (no such field on the form).
    bot_deadline_setting: str = ""
    #: How a connecting bot presents its key (games/arena/bots/bot_keys.py), for the Bots page.
    key_note: str = ""

    def bot_deadline(self) -> float | None:
        """Seconds a bot has per move by default (:attr:`bot_deadline_setting`), or None."""
        return float(settings.ARENA[self.bot_deadline_setting]) if self.bot_deadline_setting else None

    @property
    def listens(self) -> bool:
        """Whether bots connect to the arena (a "tcp" or "websocket" door): tables then offer
        "Open for any bot" seats and the arena starts each such door."""
        return any(door.listens for door in self.doors)

    @property
    def calls_bots(self) -> bool:
        """Whether the server calls registered bot services over HTTP (an "http" door): a
        registered bot of the game is then such a service (a base URL, no key), seated at
        once and played through :meth:`http_bot_endpoint`."""
        return any(door.access == "http" for door in self.doors)

    def door_label(self, door: Door) -> str:
        """How pages and messages name ``door``: the game's title, with the door's name when
        the game has several (e.g. "Contract bridge (Blue Chip table manager)")."""
        return f"{self.title} ({door.name})" if len(self.doors) > 1 else self.title

    def listener_settings_problem(self) -> str | None:
        """Why the settings in force make it unsafe to start the game's listeners (a message
        naming the setting; ``manage.py serve`` then refuses to start), or None.  By default:
        None."""
        return None

    def http_bot_endpoint(self, registered_bot) -> Any:
        """The seat endpoint for a :class:`games.arena.models.RegisteredBot` the server calls
        over HTTP.  Called only when :attr:`calls_bots`."""
        raise NotImplementedError

    async def http_bot_probe(self, base_url: str, path_style: str) -> dict:
        """The Bots page's "test the connection": what a sample request to the service got
        (shown to the bot's owner only).  Called only when :attr:`calls_bots`."""
        raise NotImplementedError

    # ---- Files: exports and imports ------------------------------------------------------

    #: format -> label of each download of a finished match (:meth:`export`); empty: none.
    exports: Mapping[str, str] = MappingProxyType({})
    #: One plain-text line per log format the import page accepts; empty: the game imports
    #: nothing (:meth:`import_match` is not called).
    import_formats: tuple[str, ...] = ()
    #: The text encodings an uploaded file is read in, tried in order (a file none of them
    #: decodes is refused); PBN's standard set is ISO 8859-1, which decodes any bytes.
    import_encodings: tuple[str, ...] = ("utf-8",)
    #: The import page's file input's ``accept``.
    import_accept: str = ""
    #: The match page's link to a finished match opened on another site (Hanabi: "Open in
    #: hanab.live", :meth:`external_replay_url`); "": no such site.
    external_replay_label: str = ""

    def export(self, fmt: str, match, state: State, names: list[str], params: Mapping,
               details_for: Collection[int] = ()) -> tuple[str, str, str]:
        """A finished ``match`` (its final ``state``, its seats' ``names``, the request's
        query ``params``) in format ``fmt`` (a key of :attr:`exports`): ``(filename, content
        type, text)``.  A format that carries forced moves' ``detail`` carries it only for the
        seats in ``details_for`` (the downloader's own, :func:`~games.arena.play.queries.detail_seats`).
        Raises ``ValueError`` for parameters that make no file."""
        raise NotImplementedError

    def import_match(self, text: str) -> dict:
        """A log file read into ``{"config", "steps": [(seat, action)], "names", "date"}``.
        Raises ``ValueError`` (a message for the uploader).  Called only when
        :attr:`import_formats` is not empty."""
        raise NotImplementedError

    def external_replay_url(self, match, state: State, names: list[str], params: Mapping) -> str:
        """The address of the finished ``match`` on the other site (the request's query
        ``params`` may choose a part of it, e.g. bridge's ``?board=N``).  Called only when
        :attr:`external_replay_label` is not empty.  Raises ``ValueError`` for parameters that
        name nothing."""
        raise NotImplementedError

    #: What the arena computes for a finished match, as the match page heads it (bridge:
    #: "Double-dummy analysis"); "": nothing (games/arena/play/analyses.py).
    analysis_label: str = ""
    #: The template the match page includes to draw the analysis; it gets ``analysis``, a list
    #: of ``{"part", "subject", "result" (None while pending), "failed"}`` in part order.
    analysis_template: str = ""

    def analysis_subjects(self, state: State) -> list:
        """What to analyse in a finished match (its final ``state``): one JSON-able subject
        per part (bridge: each board as played), stored with the match's end so the work
        survives a restart.  Called only when :attr:`analysis_label` is not empty."""
        raise NotImplementedError

    async def analyse(self, subject) -> dict:
        """The analysis of one subject, JSON-able.  Awaited on the arena's event loop, so the
        work itself must run elsewhere (a process pool) and never stall the loop.  Raises
        :class:`AnalysisBusy` to be asked again later; any other exception is a failed try
        (games/arena/play/analyses.py).  Called only when :attr:`analysis_label` is not empty."""
        raise NotImplementedError

    # ---- Presentation: labels, tags, teams -----------------------------------------------

    #: Shown under the seat choices of the create-table form.
    seats_note: str = ""

    def seat_label(self, config: Mapping, index: int) -> str:
        """How the table names a seat (e.g. "North").  By default "Seat N" (N from 1)."""
        return f"Seat {index + 1}"

    def seat_tag(self, config: Mapping, index: int) -> str:
        """A seat's short tag ("2", Jass "E"), added to a name that more than one seat has
        ("Random bot (E)").  By default "N" (from 1)."""
        return str(index + 1)

    def teams(self, config: Mapping) -> list[tuple[str, tuple[int, ...]]] | None:
        """For partnership games, ``[(label, seats)]`` (e.g. ``("N–S", (0, 2))``): results
        are shown per team, every partner of a winning team marked as a winner.  By default
        None: each seat plays for itself."""
        return None

    def describe_config(self, config: Mapping) -> list[str]:
        """The configuration as short phrases for the match header (e.g. ``["1000 points to
        win", "Match bonus"]``).  By default each field's "<label>: <value>" ("on"/"off" for
        switches, a choice's label)."""
        def shown(f: ConfigField) -> str:
            value = config[f.key]
            if f.kind == "bool":
                return "on" if value else "off"
            return dict(f.choices).get(value, str(value)) if f.kind == "choice" else str(value)

        return [f"{f.label}: {shown(f)}" for f in self.config_fields if f.key in config]

    def config_summary(self, config: Mapping) -> list[str]:
        """The match header's phrases: :meth:`describe_config`."""
        return self.describe_config(config)

    def pause_after(self, happenings: list[dict]) -> bool:
        """Whether a step with these happenings ends a round that people at the table should
        have a moment to read (``ROUND_PAUSE``).  By default any happening does."""
        return bool(happenings)

    def moves_so_far(self, match) -> list[dict] | None:
        """For the page of a running ``match``: its moves so far as public facts, so that the
        page's move list survives a reload (derived from the event log); None (the default)
        for a game whose page keeps no such list.  Never anything a seat or a spectator may
        not know while the match runs."""
        return None


GAMES: dict[str, GameSpec] = {}


def register(spec: GameSpec) -> GameSpec:
    """Add a game (an instance of its :class:`GameSpec` subclass) to :data:`GAMES` and return
    it.  Each game is a Django app whose ``AppConfig.ready`` imports its ``game.py``, which
    calls this; ``INSTALLED_APPS`` orders them as the lobby shows them.  A new game needs its
    app listed there, nothing changed here.  Raises ``TypeError`` for a spec without a
    ``slug`` or ``title``, or with a door that cannot work (an ``access`` not in
    :data:`DOOR_ACCESS`; a listening door without a port setting or a ``start``; an "http"
    door with either, or a second one)."""
    name = type(spec).__name__
    if not getattr(spec, "slug", "") or not getattr(spec, "title", ""):
        raise TypeError(f"{name} needs a slug and a title")
    for door in spec.doors:
        if door.access not in DOOR_ACCESS:
            raise TypeError(f"{name}: door {door.name!r}: access must be one of {DOOR_ACCESS}, not {door.access!r}")
        if door.listens and not (door.port_setting and door.start):
            raise TypeError(f"{name}: door {door.name!r} ({door.access}) needs a port_setting and a start")
        if not door.listens and (door.port_setting or door.start):
            raise TypeError(f"{name}: door {door.name!r}: the server calls http bots: no port_setting, no start")
    if sum(door.access == "http" for door in spec.doors) > 1:
        raise TypeError(f"{name}: one http door at most (http_bot_endpoint serves it)")
    GAMES[spec.slug] = spec
    return spec


def get(slug: str) -> GameSpec:
    """The spec for ``slug``; raises ``KeyError`` for an unknown game."""
    return GAMES[slug]


def all_games() -> list[GameSpec]:
    """Every registered game, in registration order."""
    return list(GAMES.values())
