"""Registered names: look-alikes (Unicode's confusables) and who may play under which name.

Two rules (README, *Names*):

- **Registered names are unique up to look-alikes.**  A username, and a registered bot's name
  within its game, is refused when it looks like one already registered: same letters under
  case folding and UTS #39's confusable skeleton (ICU's ``SpoofChecker``, the Unicode
  consortium's ``confusables.txt``), punctuation, spaces and symbols aside.  The database
  holds it too: every registered name keeps its :func:`name_keys` in
  :class:`~games.arena.models.NameKey`, unique per scope, so that two requests racing for
  ``alice`` and ``аlice`` cannot both win.
- **A bot without its key never plays under a registered bot's name** (every game, every door:
  the transports call :func:`claimed_bot_name` before a name is shown or sent), and a guest's
  nickname is never a registered name (:func:`claimed_name`).  What such a bot gets instead is
  each protocol's own answer (the transports' docstrings): Hanabi the original's
  ``PLAYER_ALREADY_EXISTS``; Liar's Dice, whose bots never see a name, the name a bot that
  sent none gets; Blokus, where only the administrator's ``<prepare>`` names a slot, the name
  of a slot without one.  So a keyed bot never meets a keyless one under its own name and is
  never refused because of one; where a keyless bot took a name before it was registered
  and still waits (Hanabi's gathering table), it gives way.
"""
from __future__ import annotations

import hashlib
import unicodedata

import icu

#: The scope of usernames in :class:`~games.arena.models.NameKey`; a bot's is :func:`bot_scope`.
USER_SCOPE = "user"
#: Longest name whose keys are computed (a username is at most 150 characters, any other
#: name 40; a longer text is cut first).  Bounds a key's cost whatever a client sends, in CPU
#: (``benchmarks/names_keys_cost.py``, load 11): 8 us for ``alice…``, 22 us for 40 Latin
#: letters, 0.3 ms for 40 of the longest expansions (U+FDFA, 18 letters each), 1.5 ms for 150.
MAX_KEYED = 150

# One checker for the process: getSkeleton only reads it (ICU: thread-safe once configured).
_checker = icu.SpoofChecker()


class NameTaken(ValueError):
    """A name refused as a look-alike of a registered one; ``str()`` says so in the user's
    terms, without naming whose it is."""


def bot_scope(game: str) -> str:
    """The :class:`~games.arena.models.NameKey` scope of registered bots of ``game``."""
    return f"bot:{game}"


def _skeleton(text: str) -> str:
    """UTS #39 section 4's ``skeleton(X)``: NFD, each confusable replaced by its prototype,
    NFD again (ICU's ``uspoof_getSkeleton``; ``İ``'s casefold, for one, grows a mark)."""
    return _checker.getSkeleton(0, text)


def _letters(text: str) -> str:
    """``text`` without punctuation, spaces, symbols and controls: what is left when a name is
    read aloud (``alice….`` and ``alice…`` are both ``alice``).  A name of nothing else keeps
    its whole text (``<3`` and ``:-)`` stay apart)."""
    kept = "".join(ch for ch in text if unicodedata.category(ch)[0] in "LMN")
    return kept or text


def name_keys(name: str) -> frozenset[str]:
    """The keys under which ``name`` is held: two names are look-alikes when they share one.

    Case folding and the confusable skeleton do not commute (``I`` folds to ``i`` but looks
    like ``l``), so a name has two keys: folded first, ``S(C(S(C(name))))`` (catches ``ALICE``
    and Cyrillic ``аlice`` beside ``alice``), and skeleton first, ``S(C(S(name)))`` (catches
    ``aIice`` with a capital I), where ``S`` is the skeleton and ``C`` case folding; the second
    round folds the skeleton's capital prototypes (``0`` becomes ``O``, then ``o``).  Each is
    taken without punctuation, spaces and symbols (:func:`_letters`), and stored as the SHA-256
    hex of that text (a skeleton may be several times longer than its name; the database
    indexes 64 characters).  ``name`` is cut to :data:`MAX_KEYED` characters first."""
    name = str(name)[:MAX_KEYED]
    folded = _letters(_skeleton(_skeleton(name.casefold()).casefold()))
    shaped = _letters(_skeleton(_skeleton(name).casefold()))
    return frozenset(hashlib.sha256(k.encode("utf-8", "surrogatepass")).hexdigest() for k in (folded, shaped))


def _held(keys, scopes) -> bool:
    from games.arena.models import NameKey

    return NameKey.objects.filter(key__in=list(keys), scope__in=list(scopes)).exists()


def check_free(name: str, scope: str, holder=None) -> None:
    """Raise :class:`NameTaken` if ``name`` looks like a name registered in ``scope`` (other
    than ``holder``'s own: a :class:`~games.arena.models.RegisteredBot` or user being renamed).
    Synchronous (a database query).  The forms call it for a clear message; the database's
    unique keys are what holds against a race."""
    from games.arena.models import NameKey

    held = NameKey.objects.filter(key__in=list(name_keys(name)), scope=scope)
    if holder is not None:
        held = held.exclude(**{"user" if scope == USER_SCOPE else "bot": holder})
    if held.exists():
        what = "username" if scope == USER_SCOPE else "bot name"
        raise NameTaken(f"“{name}” is taken: it looks like a {what} already registered "
                        "(names that differ only in case, punctuation or look-alike letters count as one)")


def claimed_bot_name(game: str, name: str) -> bool:
    """Whether a bot of ``game`` that presented no key claims a registered bot's name (or a
    look-alike) with ``name``: then it must not play under it (module docstring).
    Synchronous (one indexed query): transports call it through ``sync_to_async``."""
    return bool(name) and _held(name_keys(name), [bot_scope(game)])


def claimed_name(name: str) -> bool:
    """Whether a guest's nickname ``name`` is, or looks like, a username or any registered
    bot's name: a guest may not sit at a table under it.  Synchronous (one indexed query)."""
    from games.arena.models import NameKey

    return bool(name) and NameKey.objects.filter(key__in=list(name_keys(name))).exists()


def write_keys(scope: str, name: str, *, user=None, bot=None) -> None:
    """Make the :class:`~games.arena.models.NameKey` rows of ``user``'s username or ``bot``'s
    name (replacing those it held).  Raises ``django.db.IntegrityError`` when another name
    holds one of them: call it inside the transaction that saves the name."""
    from games.arena.models import NameKey

    holder = {"user": user} if user is not None else {"bot": bot}
    NameKey.objects.filter(**holder).delete()
    NameKey.objects.bulk_create([NameKey(scope=scope, key=k, **holder) for k in sorted(name_keys(name))])


# --- keeping NameKey rows with the names (connected in ArenaConfig.ready) -----------------------
def _names_of(sender, instance) -> tuple[str, str]:
    """(scope, name) of a user or a registered bot."""
    from games.arena.models import RegisteredBot

    if sender is RegisteredBot:
        return bot_scope(instance.game), instance.name
    return USER_SCOPE, instance.get_username()


def _touches_name(sender, update_fields) -> bool:
    """Whether a save may change the name or its scope (a login writes only ``last_login``)."""
    from games.arena.models import RegisteredBot

    if update_fields is None:
        return True
    fields = {"game", "name"} if sender is RegisteredBot else {sender.USERNAME_FIELD}
    return bool(fields & set(update_fields))


def refuse_look_alike(sender, instance, update_fields=None, raw=False, **kwargs) -> None:
    """``pre_save``: raise :class:`NameTaken` before a user or bot is written under a name that
    looks like another's (so a path outside the forms, e.g. ``createsuperuser``, writes
    nothing)."""
    if raw or not _touches_name(sender, update_fields):
        return
    scope, name = _names_of(sender, instance)
    check_free(name, scope, holder=instance.pk and instance)


def keep_keys(sender, instance, created=False, update_fields=None, raw=False, **kwargs) -> None:
    """``post_save``: write the name's keys in the saving transaction.  A race that
    :func:`refuse_look_alike` did not see ends here in :class:`NameTaken` (the database's
    unique key), which rolls the save back where the caller saves atomically (the forms, the
    admin)."""
    from django.db import IntegrityError, transaction

    if raw or not _touches_name(sender, update_fields):
        return
    scope, name = _names_of(sender, instance)
    holder = {"user": instance} if scope == USER_SCOPE else {"bot": instance}
    try:
        with transaction.atomic():
            write_keys(scope, name, **holder)
    except IntegrityError:
        raise NameTaken(f"“{name}” is taken: it looks like a name registered a moment ago") from None


def connect_signals() -> None:
    """Keep :class:`~games.arena.models.NameKey` with usernames and registered bots' names."""
    from django.contrib.auth import get_user_model
    from django.db.models.signals import post_save, pre_save

    from games.arena.models import RegisteredBot

    for model in (get_user_model(), RegisteredBot):
        pre_save.connect(refuse_look_alike, sender=model, dispatch_uid=f"names-pre-{model._meta.label}")
        post_save.connect(keep_keys, sender=model, dispatch_uid=f"names-post-{model._meta.label}")
