"""The games the arena knows, each described by a :class:`GameSpec`.

The arena core is game-agnostic: everything it needs to know about a game (rules, seats,
configuration form, built-in bots, what a person's silence means, the bot listener) is here.
Games register themselves when Django starts (their apps' ``ready``; see :func:`register`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping

from games.base import Action, State
from games.arena.seats import Answer


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


@dataclass(frozen=True)
class GameSpec:
    """Everything game-specific the arena and the web layer need.

    - ``new_state(config, seed)`` and ``normalize_config(config)`` (raises ``ValueError``);
    - ``num_seats(config)``: seats at a table with this (normalized) configuration;
    - ``builtin_bots``: name -> (label, policy(observation, legal_actions, rng) -> action);
    - ``human_auto_answer(state, seat)``: an :class:`Answer` when a person has no real choice
      (the request is then not shown), else None;
    - ``human_prompt(state, seat)``: (kind, seconds) of the request shown to a person;
    - ``human_timeout_answer(state, seat, seconds)``: the :class:`Answer` when they stay silent;
    - ``human_action_ok(state, seat, action)``: whether a person's action is accepted;
    - ``auto_config()``: the automatic table's configuration (from settings);
    - ``http_bot_endpoint(registered_bot)``: the seat endpoint for a bot the server calls over
      HTTP, and ``http_bot_probe(base_url, path_style)``: "test the connection" (games whose
      bots are HTTP services only);
    - ``exports``: format -> (label, ``export(match, state, names, params) -> (filename,
      content type, text)``) for finished matches; ``import_match(text)`` reads a log file
      into ``{"config", "steps": [(seat, action)], "names", "date"}`` (raises ``ValueError``);
      ``import_formats`` (one plain-text line per accepted format) and ``import_accept`` (the
      file input's ``accept``) tell the import page's visitors what to upload;
    - ``start_listener(arena)``: starts the bot listener, returns an object with ``close()``;
      ``listener_settings_problem()``: why the settings in force make it unsafe to start it (a
      message naming the setting, and ``manage.py serve`` refuses to start), or None;
    - ``protocol_note``: the lobby's line for bot authors (``{port}``: the listener's port);
    - ``seat_label(config, index)``: how the table names a seat (e.g. "North");
    - ``describe_config(config)``: the configuration as short phrases for the match header
      (e.g. ``["1000 points to win", "Match bonus"]``); by default "<field label>: <value>";
    - ``limit_config(config)``: raises ``ValueError`` (a message for the form) when a table with
      this normalized configuration would make a match too long to keep and replay; the
      fields' own bounds are checked by :meth:`table_config`;
    - ``standin``: the built-in bot that plays for a person who left or is away (Jass: partners
      should not suffer); None plays their seat as a silent bot (each request answered at once
      as the game's timeout rule says: in Liar's Dice a lost round, as the reference does with
      a disconnected bot);
    - ``strongest_bot``: the built-in bot that plays best, which the lobby's "Play a bot now"
      seats against a person (every other seat of the game's default table); None: the game
      has no such button;
    - ``seat_tag(config, index)``: a seat's short tag ("2", Jass "E"), added to a name that
      more than one seat has ("Random bot (E)");
    - ``hidden_information``: False for games where everyone may see everything (Blokus): a
      forced move's or an annotated move's ``detail`` (e.g. a bot's debug hints) then goes to
      everyone live, and pages do not speak of hidden hands;
    - ``pause_after(happenings)``: whether a step with these happenings ends a round that people
      at the table should have a moment to read (``ROUND_PAUSE``); by default any happening does;
    - ``teams(config)``: for partnership games, ``[(label, seats)]`` (e.g. ``("N–S", (0, 2))``):
      results are shown per team, every partner of a winning team marked as a winner; None
      for games where each seat plays for itself.
    """

    slug: str
    title: str
    new_state: Callable[[Mapping, int], State]
    normalize_config: Callable[[Mapping], dict]
    num_seats: Callable[[Mapping], int]
    config_fields: tuple[ConfigField, ...]
    builtin_bots: Mapping[str, tuple[str, Callable[..., Action]]]
    human_auto_answer: Callable[[State, int], Answer | None]
    human_prompt: Callable[[State, int], tuple[str, float]]
    human_timeout_answer: Callable[[State, int, float], Answer]
    human_action_ok: Callable[[State, int, Action], bool]
    auto_config: Callable[[], dict] = dict
    http_bot_endpoint: Callable[[Any], Any] | None = None
    http_bot_probe: Callable[[str, str], Awaitable[dict]] | None = None
    exports: Mapping[str, tuple[str, Callable[..., tuple[str, str, str]]]] = field(default_factory=dict)
    import_match: Callable[[str], dict] | None = None
    #: ``(label, url(match, state, names))``: a finished match opened on another site (Hanabi:
    #: hanab.live's replay viewer); the match page links to it.  None: no such site.
    external_replay: tuple[str, Callable[..., str]] | None = None
    import_formats: tuple[str, ...] = ()
    import_accept: str = ""
    start_listener: Callable[[Any], Awaitable[Any]] | None = None
    #: ``() -> (host, port)`` of the game's own WebSocket port for bots (Hanabi), served by
    #: ``manage.py serve`` (games/arena/bot_sockets.py); None: the game has none.
    bot_socket_address: Callable[[], tuple[str, int] | None] = field(default=lambda: None)
    listener_settings_problem: Callable[[], str | None] | None = None
    protocol_note: str = ""
    #: Shown under the seat choices of the create-table form.
    seats_note: str = ""
    seat_label: Callable[[Mapping, int], str] = field(default=lambda config, index: f"Seat {index + 1}")
    teams: Callable[[Mapping], list[tuple[str, tuple[int, ...]]]] | None = None
    seat_tag: Callable[[Mapping, int], str] = field(default=lambda config, index: str(index + 1))
    standin: str | None = None
    strongest_bot: str | None = None
    describe_config: Callable[[Mapping], list[str]] | None = None
    hidden_information: bool = True
    pause_after: Callable[[list[dict]], bool] = field(default=bool)
    limit_config: Callable[[Mapping], None] | None = None

    def table_config(self, config: Mapping) -> dict:
        """The normalized configuration of a new table, within the create-table form's bounds.

        The rules accept wider configurations (stored and imported matches replay through
        them); a new table must stay inside each :class:`ConfigField`'s ``minimum`` ..
        ``maximum`` and pass ``limit_config``, whatever the request says, so no request makes
        a match too long to keep and replay.
        Raises ``ValueError`` naming the setting.
        """
        config = self.normalize_config(config)
        for f in self.config_fields:
            value = config.get(f.key)
            if f.kind == "int" and isinstance(value, int) and not f.minimum <= value <= f.maximum:
                raise ValueError(f"{f.label} must be from {f.minimum} to {f.maximum}.")
            if f.kind == "choice" and value not in dict(f.choices):
                raise ValueError(f"{f.label}: choose one of {', '.join(label for _, label in f.choices)}.")
        if self.limit_config is not None:
            self.limit_config(config)
        return config

    def config_summary(self, config: Mapping) -> list[str]:
        """``describe_config(config)``, or each field's label and value ("on"/"off" for switches)."""
        if self.describe_config is not None:
            return self.describe_config(config)
        def shown(f: ConfigField) -> str:
            value = config[f.key]
            if f.kind == "bool":
                return "on" if value else "off"
            return dict(f.choices).get(value, str(value)) if f.kind == "choice" else str(value)

        return [f"{f.label}: {shown(f)}" for f in self.config_fields if f.key in config]


GAMES: dict[str, GameSpec] = {}


def register(spec: GameSpec) -> GameSpec:
    """Add a game to :data:`GAMES`.  Each game is a Django app whose ``AppConfig.ready``
    imports its ``game.py``, which calls this; ``INSTALLED_APPS`` orders them as the lobby
    shows them.  A new game needs its app listed there, nothing changed here."""
    GAMES[spec.slug] = spec
    return spec


def get(slug: str) -> GameSpec:
    """The spec for ``slug``; raises ``KeyError`` for an unknown game."""
    return GAMES[slug]


def all_games() -> list[GameSpec]:
    """Every registered game, in registration order."""
    return list(GAMES.values())
