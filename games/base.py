"""The rules interface every game implements (docs/architecture.md, "Layers").

Pure Python: no Django, no I/O.  The shape follows OpenSpiel's Game/State API, with one
generalisation: a step may ask several seats at once (Liar's Dice asks every player on every
move), so ``apply`` takes a mapping of seat to action.

A match replays exactly from ``(config, seed, steps)``: all chance (dice, deals, seat
shuffles) comes from a ``random.Random(seed)`` owned by the state.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Mapping

#: An action is whatever a game's rules use; it must round-trip through JSON unchanged
#: (lists, strings, numbers, None).  ``None`` means "no valid answer" where a game allows it.
Action = Any


class ProtocolError(ValueError):
    """A wire message a codec cannot accept; the message says what a bot author should fix."""


class State(ABC):
    """The state of one match.  Mutable; ``clone`` gives an independent copy."""

    #: Number of seats, fixed for the match.
    num_seats: int

    @abstractmethod
    def to_act(self) -> tuple[int, ...]:
        """Seats (0-based) that must answer at this step; empty only when terminal."""

    @abstractmethod
    def is_legal(self, seat: int, action: Action) -> bool:
        """Whether ``action`` is an acceptable answer from ``seat`` now."""

    @abstractmethod
    def legal_actions(self, seat: int) -> list[Action]:
        """Every legal action for ``seat`` now (may be long; bots sample from it)."""

    @abstractmethod
    def apply(self, actions: Mapping[int, Action]) -> list[dict]:
        """Apply one answer per seat in ``to_act()``.

        Returns the public happenings of the step (JSON-able dicts with a ``"type"`` key, e.g.
        a round's outcome), which the runner forwards to every seat and spectator.
        Raises ``ValueError`` if a seat in ``to_act()`` is missing or an action is illegal
        where the game has no rule for illegal answers.
        """

    @abstractmethod
    def observation(self, seat: int) -> dict:
        """What ``seat`` may know now, JSON-able."""

    @abstractmethod
    def public_observation(self) -> dict:
        """What a spectator may know now, JSON-able."""

    def revealed_observation(self) -> dict:
        """The public view plus hidden information that is no longer current (the hands of a
        round or deal already over), JSON-able: the opt-in "every hand" view of a bots-only
        table while it runs.  It must never show a secret some seat still
        holds, since anyone, a seated bot included, may watch.  Default: the public view (a
        game whose public view already reveals finished rounds needs nothing more)."""
        return self.public_observation()

    @abstractmethod
    def full_observation(self) -> dict:
        """Everything, hidden information included: finished matches and replays only."""

    @abstractmethod
    def is_terminal(self) -> bool:
        """Whether the match is over."""

    @abstractmethod
    def result(self) -> dict:
        """The match result: ``{"scores": [float per seat], "winner": seat | None, ...}``."""

    @abstractmethod
    def clone(self) -> "State":
        """An independent copy (bots use it to search; replays to keep snapshots)."""
