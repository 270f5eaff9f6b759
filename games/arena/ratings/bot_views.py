"""Registered bots, a logged-in user's identities: list, register, key, test, share, remove.

Two kinds, as the game's doors say (``GameSpec.calls_bots``): a service the server calls
over HTTP (Jass), with a base URL that only its owner (or staff) sees, with what its
connection tests answered (it may be an internal service's text), and only they may run a
test (rate-limited per bot and per user, bounded in flight); or a bot that connects to one
of the game's ports and presents its key (games/arena/bots/bot_keys.py), shown to the owner once
when made or replaced.  The owner decides whether others may seat the bot
(``RegisteredBot.shared``).  The same page gives a logged-in user their personal API token
(games/arena/bots/api_tokens.py), shown once too.
"""
from __future__ import annotations

import json
import threading

from asgiref.sync import sync_to_async
from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.cache import cache
from django.db import transaction
from django.http import Http404, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from games.arena import registry
from games.arena.bots import api_tokens, bot_keys, http_bots, names, throttle
from games.arena.models import ApiToken, RegisteredBot


def http_games() -> list:
    """Games whose bots the server calls over HTTP."""
    return [g for g in registry.all_games() if g.calls_bots]


def bot_games() -> list:
    """Games that outside bots play (over HTTP or by connecting)."""
    return [g for g in registry.all_games() if g.doors]


class BotForm(forms.ModelForm):
    """Game, name and whether others may seat it; for a game whose bots the server calls over
    HTTP also the base URL (checked as untrusted) and path style."""

    class Meta:
        model = RegisteredBot
        fields = ["game", "name", "base_url", "path_style", "shared"]
        labels = {"base_url": "Base URL", "shared": "Others may seat this bot at their tables"}
        help_texts = {"base_url": "e.g. http://127.0.0.1:5001 (seed style) or http://127.0.0.1:8888/my-bot (kit style)"}

    game = forms.ChoiceField()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["game"].choices = [(g.slug, g.title) for g in bot_games()]
        self.fields["base_url"].required = False
        self.fields["path_style"].required = False  # not sent for a bot that connects (hidden)
        self.fields["base_url"].help_text += " (only for bots the server calls over HTTP)"
        # The page shows the address and path style only while a game whose bots the server
        # calls is chosen (bots.html); without scripts they stay, with the note above.
        self.fields["game"].widget.attrs["data-http-games"] = " ".join(g.slug for g in http_games())
        for name in ("base_url", "path_style"):
            self.fields[name].widget.attrs["data-http-only"] = ""

    def clean_name(self):
        from games.names import clean_name

        name = clean_name(self.cleaned_data["name"])
        if not name:
            raise forms.ValidationError("A bot needs a name with visible characters.")
        return name

    def clean(self):
        data = super().clean()
        game = data.get("game")
        if game and data.get("name"):
            try:  # unique up to look-alikes: alice, ALICE, aIice, alice. and Cyrillic аlice are one
                names.check_free(data["name"], names.bot_scope(game), holder=self.instance.pk and self.instance)
            except names.NameTaken as exc:
                self.add_error("name", str(exc))
        if game and not registry.get(game).calls_bots:
            if (data.get("base_url") or "").strip():
                self.add_error("base_url", f"{registry.get(game).title} bots connect to the arena with a key: "
                                           "leave the address empty (or choose the game whose bots you serve)")
            data["base_url"] = ""  # it connects to us: no address to call
            data["path_style"] = RegisteredBot.PathStyle.KIT  # unused; the model's default
            return data
        if not data.get("path_style"):
            self.add_error("path_style", "Choose the path style your bot service answers.")
        try:
            data["base_url"] = http_bots.check_url(data.get("base_url") or "")
        except ValueError as exc:
            self.add_error("base_url", str(exc))
        return data


def may_manage(user, bot: RegisteredBot) -> bool:
    """Whether ``user`` may test the bot and see its URL and test results: its owner or staff."""
    return user.is_authenticated and (bot.owner_id == user.pk or user.is_staff)


def bot_list(request):
    """Every registered bot (name, game, owner, shared or not); logged-in users register
    theirs here.  URL and test results are shown only where :func:`may_manage` allows."""
    form = None
    new_key = None
    if request.user.is_authenticated:
        form = BotForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            bot = form.save(commit=False)
            bot.owner = request.user
            key = None
            if not registry.get(bot.game).calls_bots:
                key, bot.key_hash = bot_keys.new_key()
            try:
                with transaction.atomic():  # the name's look-alike keys are written with it
                    bot.save()
            except names.NameTaken as exc:  # registered a moment ago by another request
                form.add_error("name", str(exc))
                return _bot_page(request, form, None)
            if key is None:
                return redirect(f"/bots/#bot-{bot.pk}")
            new_key = {"bot": bot, "key": key}
            form = BotForm()
    return _bot_page(request, form, new_key)


@login_required
@require_POST
def bot_key(request, bot_id: int):
    """The owner replaces a connecting bot's key: the new one is shown once, the old one stops
    working at once (a bot already playing plays on)."""
    bot = _bot_or_404(bot_id)
    if bot.owner_id != request.user.pk:
        return HttpResponseForbidden("Only the bot's owner can replace its key.")
    if registry.get(bot.game).calls_bots:
        return HttpResponseForbidden("The server calls this bot: it has no key.")
    key, bot.key_hash = bot_keys.new_key()
    bot.save(update_fields=["key_hash"])
    return _bot_page(request, BotForm(), {"bot": bot, "key": key})


@login_required
@require_POST
def api_token(request):
    """Make (or replace) the user's personal API token, shown once in this answer; or, with
    ``action=revoke``, delete it."""
    if request.POST.get("action") == "revoke":
        if api_tokens.revoke_token(request.user):
            messages.info(request, "Your API token was revoked: requests that present it are refused.")
        return redirect("/bots/#api-token")
    return _bot_page(request, BotForm(), None, new_token=api_tokens.make_token(request.user))


def _bot_page(request, form, new_key: dict | None, new_token: str | None = None):
    """The bots page; ``new_key`` (``{"bot", "key"}``) and ``new_token`` (the user's new API
    token) are shown once, in this answer only (never stored, never in a redirect, a message
    or a cookie)."""
    bots = list(RegisteredBot.objects.select_related("owner").order_by("game", "name"))
    for bot in bots:
        bot.manageable = may_manage(request.user, bot)
        if not bot.manageable:  # the template shows neither; drop them so nothing can leak
            bot.base_url, bot.last_check, bot.last_checked_at = "", None, None
        # shown as JSON, the way the bot received it
        bot.request_text = json.dumps(bot.last_check.get("request"), indent=1) if bot.last_check else ""
    specs = {g.slug: g for g in registry.all_games()}
    for bot in bots:
        bot.title = specs[bot.game].title if bot.game in specs else bot.game
        bot.connects = bot.game in specs and specs[bot.game].listens
    response = render(request, "arena/bots.html", {
        "bots": bots, "form": form, "new_key": new_key,
        "key_notes": [(g.title, g.key_note) for g in bot_games() if g.listens],
        "bot_games": [(g.slug, g.title) for g in bot_games()], "new_token": new_token,
        "token": (ApiToken.objects.filter(user=request.user).first() if request.user.is_authenticated else None)})
    if new_key is not None or new_token is not None:
        response["Cache-Control"] = "no-store"  # the key or token is in this page only
    return response


class InFlight:
    """A count of calls in progress with a ceiling, shared by every thread and event loop of
    the process (the test client runs each request on a loop of its own)."""

    def __init__(self):
        self.count = 0
        self._lock = threading.Lock()

    def try_enter(self, limit: int) -> bool:
        """Count one more call and return True, or return False when ``limit`` are running."""
        with self._lock:
            if self.count >= limit:
                return False
            self.count += 1
            return True

    def leave(self) -> None:
        """One call is over."""
        with self._lock:
            self.count -= 1


#: Connection tests running in this process (bounded by ``BOT_TESTS_IN_FLIGHT``).
tests_in_flight = InFlight()


async def over_rate(key: str, per_minute: int) -> bool:
    """Count one connection test for ``key`` in the current clock minute (Django's cache: per
    process by default, shared when a shared cache is configured); True when it is over
    ``per_minute``."""
    window = f"arena:bot-tests:{key}:{int(throttle.clock() // 60)}"  # the throttles' clock
    await cache.aadd(window, 0, timeout=70)
    try:
        count = await cache.aincr(window)
    except ValueError:  # expired between add and incr: this is the window's first test
        await cache.aset(window, 1, timeout=70)
        count = 1
    return count > per_minute


@require_POST
async def bot_test(request, bot_id: int):
    """"Test the connection": send the game's sample request and keep what the bot answered.

    Logged-in owner (or staff) only.  Refused with a message on the bots page when the bot
    or the user already had ``BOT_TESTS_PER_MINUTE`` tests this minute, or when
    ``BOT_TESTS_IN_FLIGHT`` tests are running; the test itself uses the probe pool.
    """
    user = await request.auser()
    if not user.is_authenticated:
        return redirect_to_login("/bots/")
    bot = await RegisteredBot.objects.filter(pk=bot_id).afirst()
    if bot is None:
        raise Http404("no such bot")
    if not may_manage(user, bot):
        return HttpResponseForbidden("Only the bot's owner can test its connection.")
    back = redirect(f"/bots/#bot-{bot.pk}")
    per_minute = settings.ARENA["BOT_TESTS_PER_MINUTE"]
    if await over_rate(f"user:{user.pk}", per_minute) or await over_rate(f"bot:{bot.pk}", per_minute):
        messages.error(request, f"Not tested: at most {per_minute} connection tests a minute per bot and per "
                                "user. Try again in a minute.")
        return back
    if not tests_in_flight.try_enter(settings.ARENA["BOT_TESTS_IN_FLIGHT"]):
        messages.error(request, "Not tested: too many connection tests are running right now. "
                                "Try again in a few seconds.")
        return back
    try:
        result = await registry.get(bot.game).http_bot_probe(bot.base_url, bot.path_style)
    finally:
        tests_in_flight.leave()
    bot.last_check = result
    bot.last_checked_at = timezone.now()
    await sync_to_async(bot.save)(update_fields=["last_check", "last_checked_at"])
    return back


def _bot_or_404(bot_id: int) -> RegisteredBot:
    """The registered bot ``bot_id``; raises ``Http404`` when there is none."""
    bot = RegisteredBot.objects.filter(pk=bot_id).first()
    if bot is None:
        raise Http404("no such bot")
    return bot


@login_required
@require_POST
def bot_share(request, bot_id: int):
    """The owner decides whether others may seat the bot (the ``shared`` check box)."""
    bot = _bot_or_404(bot_id)
    if bot.owner_id != request.user.pk:
        return HttpResponseForbidden("Only the bot's owner can decide who may seat it.")
    bot.shared = request.POST.get("shared") == "on"
    bot.save(update_fields=["shared"])
    return redirect(f"/bots/#bot-{bot.pk}")


@login_required
@require_POST
def bot_delete(request, bot_id: int):
    """Owners remove their bots (seats already played keep the name)."""
    bot = _bot_or_404(bot_id)
    if bot.owner_id != request.user.pk and not request.user.is_staff:
        return HttpResponseForbidden("Only the bot's owner can remove it.")
    bot.delete()
    return redirect("bots")
