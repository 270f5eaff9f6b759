"""Registered bots (games whose bots are HTTP services): list, register, test, remove."""
from __future__ import annotations

import json

from asgiref.sync import sync_to_async
from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from games.arena import http_bots, registry
from games.arena.models import RegisteredBot


def http_games() -> list:
    """Games whose bots the server calls over HTTP."""
    return [g for g in registry.all_games() if g.http_bot_endpoint is not None]


class BotForm(forms.ModelForm):
    """Name, base URL and path style of a bot service; the URL is checked as untrusted."""

    class Meta:
        model = RegisteredBot
        fields = ["game", "name", "base_url", "path_style"]
        labels = {"base_url": "Base URL"}
        help_texts = {"base_url": "e.g. http://127.0.0.1:5001 (seed style) or http://127.0.0.1:8888/my-bot (kit style)"}

    game = forms.ChoiceField()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["game"].choices = [(g.slug, g.title) for g in http_games()]

    def clean_name(self):
        from games.arena.tables import clean_name

        name = clean_name(self.cleaned_data["name"])
        if not name:
            raise forms.ValidationError("A bot needs a name with visible characters.")
        return name

    def clean_base_url(self):
        try:
            return http_bots.check_url(self.cleaned_data["base_url"])
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None


def bot_list(request):
    """Every registered bot; logged-in users register theirs here."""
    form = None
    if request.user.is_authenticated:
        form = BotForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            bot = form.save(commit=False)
            bot.owner = request.user
            bot.save()
            return redirect(f"/bots/#bot-{bot.pk}")
    bots = list(RegisteredBot.objects.select_related("owner").order_by("game", "name"))
    for bot in bots:  # shown as JSON, the way the bot received it
        bot.request_text = json.dumps(bot.last_check.get("request"), indent=1) if bot.last_check else ""
    titles = {g.slug: g.title for g in registry.all_games()}
    return render(request, "arena/bots.html", {"bots": bots, "form": form, "titles": titles,
                                               "http_games": [(g.slug, g.title) for g in http_games()]})


@require_POST
async def bot_test(request, bot_id: int):
    """"Test the connection": send the game's sample request and keep what the bot answered."""
    bot = await RegisteredBot.objects.filter(pk=bot_id).afirst()
    if bot is None:
        raise Http404("no such bot")
    spec = registry.get(bot.game)
    result = await spec.http_bot_probe(bot.base_url, bot.path_style)
    bot.last_check = result
    bot.last_checked_at = timezone.now()
    await sync_to_async(bot.save)(update_fields=["last_check", "last_checked_at"])
    return redirect(f"/bots/#bot-{bot.pk}")


@login_required
@require_POST
def bot_delete(request, bot_id: int):
    """Owners remove their bots (seats already played keep the name)."""
    bot = RegisteredBot.objects.filter(pk=bot_id).first()
    if bot is None:
        raise Http404("no such bot")
    if bot.owner_id != request.user.pk and not request.user.is_staff:
        return HttpResponseForbidden("Only the bot's owner can remove it.")
    bot.delete()
    return redirect("bots")
