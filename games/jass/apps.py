"""Jass (Schieber) as a Django app: its GameSpec is registered when Django starts (games/arena/registry.py)."""
from django.apps import AppConfig


class JassConfig(AppConfig):
    name = "games.jass"
    label = "jass"
    verbose_name = "Jass (Schieber)"

    def ready(self) -> None:
        from games.jass import game  # noqa: F401  (registers the game's GameSpec)
