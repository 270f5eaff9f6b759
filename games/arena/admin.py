"""Operators' view of matches, seats and the event log (read-mostly: the log is append-only)."""
from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm

from games.arena.bots import names
from games.arena.models import Event, Match, Seat


def _not_a_look_alike(form, username: str) -> str:
    """``username``, unless it looks like another user's (games/arena/bots/names.py): said on the
    admin's form rather than as a server error from the database's keys."""
    try:
        names.check_free(username, names.USER_SCOPE, holder=form.instance.pk and form.instance)
    except names.NameTaken as exc:
        raise forms.ValidationError(str(exc)) from None
    return username


class ArenaUserCreationForm(AdminUserCreationForm):
    """The admin's "add user" form, refusing a look-alike username."""

    def clean_username(self):
        return _not_a_look_alike(self, super().clean_username())


class ArenaUserChangeForm(UserChangeForm):
    """The admin's user form, refusing a rename to a look-alike username."""

    def clean_username(self):
        return _not_a_look_alike(self, self.cleaned_data["username"])


class ArenaUserAdmin(UserAdmin):
    """Django's user admin with the look-alike check on its forms."""

    add_form = ArenaUserCreationForm
    form = ArenaUserChangeForm


admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), ArenaUserAdmin)


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
