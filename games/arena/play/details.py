"""Who may read a forced move's full ``detail`` (:attr:`games.arena.models.Event.detail`): one
rule, which every door asks (the live views in games/arena/play/runner.py; after the match the JSON
API's events and replay frames, the downloads, a bot's and a person's pages).

The detail is the full explanation of a forced move or a bot's own remark (its line quoting
its hand, a bot service's error text with its address, Blokus's debug hints), so:

- in a game without hidden information (Blokus) it is everyone's, live and after: the live
  table shows it to all, and a bot's debug hints are meant for the viewer, as on the
  official server;
- elsewhere, while the match runs, only the seat's own view has it (its person's page);
- once the match is over, the seat's holder has it: the logged-in person who sat there, the
  owner of the registered bot that sat there, and staff; a seat of no identity (a bot that
  connected without a key, a guest, a built-in bot) is everyone's: nobody can prove they are
  its author, and its detail only repeats what that seat sent or that it was late, which its
  author needs to debug from the match's download.
"""
from __future__ import annotations

from typing import NamedTuple

from games.arena import registry

#: The audience of the spectators' live view.
PUBLIC = "public"


class Holder(NamedTuple):
    """Whose a seat was, for its details after the match: the logged-in person who sat there
    (``user_id``) or the owner of the registered bot that sat there (``bot_owner_id``); both
    None for a seat of no identity."""

    user_id: int | None = None
    bot_owner_id: int | None = None


def public(game: str | None) -> bool:
    """Whether forced moves' details are everyone's in ``game`` (a slug; None or an unknown
    game: no): in a game without hidden information."""
    try:
        return game is not None and not registry.get(game).hidden_information
    except KeyError:
        return False


def may_see(game: str | None, viewer, *, seat: int | None = None, holder: Holder | None = None) -> bool:
    """Whether ``viewer`` may read the full ``detail`` of one seat's forced moves in a match of
    ``game`` (the module docstring's rule).  Give exactly one of:

    - ``seat``, while the match runs: that seat's index; ``viewer`` is the audience of a live
      view: a seat index (that seat's own view) or :data:`PUBLIC` (spectators);
    - ``holder``, once it is over: whose the seat was (:class:`Holder`); ``viewer`` is a user
      (a request's ``user``, an API token's user; anonymous or None: nobody logged in).

    Raises ``TypeError`` when neither or both are given."""
    if (seat is None) == (holder is None):
        raise TypeError("may_see needs either seat (live) or holder (after the match)")
    if public(game):
        return True
    if holder is None:
        return viewer == seat
    if viewer is None or not viewer.is_authenticated:
        return holder == Holder()
    return viewer.is_staff or holder == Holder() or viewer.pk in (holder.user_id, holder.bot_owner_id)
