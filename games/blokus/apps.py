"""Blokus as a Django app: its GameSpec is registered when Django starts (games/arena/registry.py)."""
from django.apps import AppConfig


class BlokusConfig(AppConfig):
    name = "games.blokus"
    label = "blokus"
    verbose_name = "Blokus"

    def ready(self) -> None:
        from games.blokus import game  # noqa: F401  (registers the game's GameSpec)
