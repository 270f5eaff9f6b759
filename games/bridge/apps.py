"""Contract bridge as a Django app: its GameSpec is registered when Django starts (games/arena/registry.py)."""
from django.apps import AppConfig


class BridgeConfig(AppConfig):
    name = "games.bridge"
    label = "bridge"
    verbose_name = "Contract bridge"

    def ready(self) -> None:
        from games.bridge import game  # noqa: F401  (registers the game's GameSpec)
