"""``manage.py recompute_ratings [--game SLUG]``: rate every finished match again, in the order
they finished (games/arena/ratings/rating.py), e.g. after restoring a database or changing who is
rated.  The result equals what the matches gave as they finished."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from games.arena import registry
from games.arena.ratings import rating


class Command(BaseCommand):
    help = "Recompute every rating from the finished matches, in finishing order."

    def add_arguments(self, parser):
        parser.add_argument("--game", help="only this game (its slug, e.g. liars_dice)")

    def handle(self, *args, game=None, **options):
        if game is not None and game not in {g.slug for g in registry.all_games()}:
            raise CommandError(f"unknown game {game!r}")
        rated = rating.recompute(game)
        self.stdout.write(f"rated {rated} match(es)")
