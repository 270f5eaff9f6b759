"""Liar's Dice as a Django app: its GameSpec is registered when Django starts (games/arena/registry.py)."""
from django.apps import AppConfig


class LiarsDiceConfig(AppConfig):
    name = "games.liars_dice"
    label = "liars_dice"
    verbose_name = "Liar's Dice"

    def ready(self) -> None:
        from games.liars_dice import game  # noqa: F401  (registers the game's GameSpec)
