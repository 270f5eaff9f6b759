from django.apps import AppConfig


class ArenaConfig(AppConfig):
    """The game-agnostic arena: tables, seats, the event log, runners and the web pages."""

    name = "games.arena"
    label = "arena"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from games.arena.bots import names

        names.connect_signals()  # registered names are unique up to look-alikes
