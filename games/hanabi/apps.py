"""Hanabi as a Django app: its GameSpec is registered when Django starts (games/arena/registry.py)."""
from django.apps import AppConfig


class HanabiConfig(AppConfig):
    name = "games.hanabi"
    label = "hanabi"
    verbose_name = "Hanabi"

    def ready(self) -> None:
        from games.hanabi import game  # noqa: F401  (registers the game's GameSpec)
