"""Operators' view of matches, seats and the event log (read-mostly: the log is append-only)."""
from django.contrib import admin

from games.arena.models import Event, Match, Seat


class SeatInline(admin.TabularInline):
    model = Seat
    extra = 0
    fields = ("index", "kind", "builtin_bot", "occupied", "display_name", "user", "final_score")


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    list_display = ("id", "game", "status", "auto", "created_at", "started_at", "finished_at")
    list_filter = ("game", "status", "auto")
    search_fields = ("seats__display_name",)
    readonly_fields = ("seed", "created_at", "started_at", "finished_at", "result")
    inlines = [SeatInline]


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    list_display = ("match", "seq", "step", "seat", "action", "forced", "reason", "think_ms")
    list_filter = ("forced",)
    search_fields = ("match__id",)
    readonly_fields = ("match", "seq", "step", "seat", "action", "forced", "reason", "think_ms")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
