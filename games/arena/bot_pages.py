"""A registered bot's page (``/bots/<id>/``): what its author looks at first.

Its header (name, game, owner, how its identity is verified, its rating), its results against
each opponent with the mean score difference and its 95% interval, its rating after each rated
match (a Chart.js line chart, served from our own static files, and the same numbers in a
table), its recent matches, and its recent forced moves with its think time and timeouts.

Bounds: everything is computed from the bot's last :data:`MAX_MATCHES` matches at most (the
page says so); the lists show the last :data:`RECENT_MATCHES` matches and the last
:data:`RECENT_FORCED` forced moves.  A forced move's ``detail`` (which may name the seat's own
hidden information) is shown to the bot's owner and to staff only; everyone else sees its
public ``reason``.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from django.db.models import Avg, Count, Exists, OuterRef, Q
from django.http import Http404
from django.shortcuts import render

from games.arena import registry
from games.arena.models import Event, Match, Rating, RatingChange, RegisteredBot, Seat

#: The most matches (its latest) the results, the rating chart and the think time look at.
MAX_MATCHES = 1000
#: How many of its latest matches the "Recent matches" list shows.
RECENT_MATCHES = 20
#: How many of its latest forced moves are listed.
RECENT_FORCED = 50
#: A forced move's public ``reason`` that says the seat said nothing before its deadline, as
#: the transports write it: "no answer within N s" (HTTP bots), "no reply within N s" (Liar's
#: Dice), "no move within N s" (people, Blokus), "no action within N s" (Hanabi), possibly
#: followed by what was played instead ("…: played by Random bot").
TIMEOUT_REASON = r"^no (answer|reply|move|action) within |timed out"


@dataclass
class HeadToHead:
    """The bot's results against one opponent identity over its finished matches."""

    key: str
    name: str
    kind: str
    bot_id: int | None = None
    wins: int = 0
    draws: int = 0
    losses: int = 0
    differences: list[float] = field(default_factory=list)

    @property
    def matches(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def mean_difference(self) -> float | None:
        """Mean of (the bot's final score − the opponent's), None without a score."""
        return statistics.fmean(self.differences) if self.differences else None

    @property
    def ci95(self) -> float | None:
        """Half-width of the mean difference's 95% interval (normal approximation,
        1.96 · sd / √n); None below 2 scored matches."""
        n = len(self.differences)
        return 1.96 * statistics.stdev(self.differences) / math.sqrt(n) if n > 1 else None


def identity_of(seat: Seat) -> tuple[str, str, str, int | None]:
    """``(key, name, kind, bot_id)`` of whoever sat at ``seat``: a registered bot by its id, a
    person by their account, a built-in bot by its name, otherwise the name shown, marked
    ``unverified`` (a bot without its key) or ``guest`` (a person without an account)."""
    if seat.registered_bot_id is not None:
        name = seat.registered_bot.name if seat.registered_bot else seat.display_name
        return f"bot:{seat.registered_bot_id}", name, "bot", seat.registered_bot_id
    if seat.user_id is not None:
        return f"user:{seat.user_id}", seat.user.get_username() if seat.user else seat.display_name, "person", None
    if seat.kind == Seat.Kind.BUILTIN and seat.builtin_bot:
        return f"builtin:{seat.builtin_bot}", seat.display_name or seat.builtin_bot, "built-in bot", None
    kind = "unverified" if seat.kind == Seat.Kind.PROTOCOL else "guest"
    return f"{kind}:{seat.display_name}", seat.display_name or "?", kind, None


def seat_ranks(match: Match, ranks_by_seat: dict[int, int] | None) -> dict[int, int] | None:
    """Each seat's rank (1 best, equal for a tie) in the finished ``match``: from its
    :class:`RatingChange` rows when it was rated, else from the result as the game ranks it
    (``GameSpec.rating_ranks``), else from ``result["winner"]``/``["winners"]``, else from the
    scores (higher better).  None when the result says none of these."""
    if ranks_by_seat:
        return ranks_by_seat
    result = match.result if isinstance(match.result, dict) else {}
    try:
        spec = registry.get(match.game)
        ranks = None if spec.cooperative else spec.rating_ranks(match.config, result)
    except Exception:  # an unknown game, or a result its spec can't read
        ranks = None
    if ranks:
        return dict(enumerate(ranks))
    seats = len(result.get("scores") or []) or None
    winners = result.get("winners")
    if winners is None and isinstance(result.get("winner"), int):
        winners = [result["winner"]]
    if isinstance(winners, list) and winners and seats:
        return {i: 1 if i in winners else 2 for i in range(seats)}
    scores = result.get("scores")
    if isinstance(scores, list) and scores and all(isinstance(s, (int, float)) for s in scores):
        return {i: 1 + sum(other > s for other in scores) for i, s in enumerate(scores)}
    return None


def partners_of(match: Match, index: int) -> set[int]:
    """The seats playing on ``index``'s side (itself included) in a partnership game."""
    try:
        teams = registry.get(match.game).teams(match.config)
    except Exception:
        teams = None
    for _, members in teams or ():
        if index in members:
            return set(members)
    return {index}


def outcome_word(ranks: dict[int, int] | None, index: int) -> str:
    """"won", "draw", "lost" (or "rank k of n" with more than two ranks) for seat ``index``."""
    if not ranks or index not in ranks:
        return "–"
    values = list(ranks.values())
    best = min(values)
    if values.count(best) == len(values):
        return "draw"
    if ranks[index] == best:
        return "won"
    distinct = sorted(set(values))
    return "lost" if len(distinct) == 2 else f"rank {distinct.index(ranks[index]) + 1} of {len(distinct)}"


def bot_summary(bot: RegisteredBot, *, show_detail: bool) -> dict:
    """Everything the page shows about ``bot`` (see the module docstring), as plain data."""
    seats = list(Seat.objects.filter(registered_bot_id=bot.pk).exclude(match__status=Match.Status.OPEN)
                 .order_by("-match__created_at", "-match_id").values_list("match_id", "index")[:MAX_MATCHES * 2])
    match_ids = list(dict.fromkeys(m for m, _ in seats))[:MAX_MATCHES]
    mine: dict[int, list[int]] = {}
    for match_id, index in seats:
        if match_id in mine or len(mine) < MAX_MATCHES:
            mine.setdefault(match_id, []).append(index)
    matches = {m.pk: m for m in Match.objects.filter(pk__in=match_ids)
               .prefetch_related("seats__registered_bot", "seats__user")}
    changes: dict[int, dict[int, int]] = {}
    for match_id, seat, rank in RatingChange.objects.filter(match_id__in=match_ids).values_list("match_id", "seat", "rank"):
        changes.setdefault(match_id, {})[seat] = rank

    # Results against each opponent (finished matches only).
    opponents: dict[str, HeadToHead] = {}
    finished = 0
    for match_id in match_ids:
        match = matches.get(match_id)
        if match is None or match.status != Match.Status.FINISHED:
            continue
        finished += 1
        ranks = seat_ranks(match, changes.get(match_id))
        all_seats = {s.index: s for s in match.seats.all()}
        for index in mine[match_id]:
            me = all_seats.get(index)
            side = partners_of(match, index)
            for other in all_seats.values():
                if other.index in side or other.registered_bot_id == bot.pk or not other.occupied:
                    continue  # partners and copies of itself are not opponents
                key, name, kind, bot_id = identity_of(other)
                row = opponents.setdefault(key, HeadToHead(key, name, kind, bot_id))
                if ranks and index in ranks and other.index in ranks:
                    if ranks[index] < ranks[other.index]:
                        row.wins += 1
                    elif ranks[index] == ranks[other.index]:
                        row.draws += 1
                    else:
                        row.losses += 1
                if me is not None and me.final_score is not None and other.final_score is not None:
                    row.differences.append(me.final_score - other.final_score)
    head_to_head = sorted(opponents.values(), key=lambda r: (-r.matches, r.name.lower()))

    # Its rating after each rated match (oldest first), within the same matches.
    rating = Rating.objects.filter(game=bot.game, subject=f"bot:{bot.pk}").first()
    chart = []
    if rating is not None:
        for change in (RatingChange.objects.filter(rating=rating, match_id__in=match_ids)
                       .select_related("match").order_by("match__finished_at", "match_id")):
            chart.append({"match": change.match_id, "mu": round(change.mu_after, 4),
                          "sigma": round(change.sigma_after, 4),
                          "ordinal": round(change.mu_after - 3 * change.sigma_after, 4),
                          "finished": change.match.finished_at.isoformat() if change.match.finished_at else None})

    # Recent matches.
    recent = []
    for match_id in match_ids[:RECENT_MATCHES]:
        match = matches.get(match_id)
        if match is None:
            continue
        all_seats = sorted(match.seats.all(), key=lambda s: s.index)
        ranks = seat_ranks(match, changes.get(match_id)) if match.status == Match.Status.FINISHED else None
        index = mine[match_id][0]
        me = next((s for s in all_seats if s.index == index), None)
        others = [identity_of(s) + (s.final_score,) for s in all_seats
                  if s.index not in mine[match_id] and s.occupied]
        recent.append({"match": match, "outcome": outcome_word(ranks, index) if ranks else match.get_status_display(),
                       "score": me.final_score if me else None, "rated": match_id in changes,
                       "others": [{"name": n, "kind": k, "bot_id": b, "score": sc} for _, n, k, b, sc in others]})

    # Forced moves, think time and timeouts at its seats in the same matches.
    its_seat = Exists(Seat.objects.filter(match_id=OuterRef("match_id"), index=OuterRef("seat"),
                                          registered_bot_id=bot.pk))
    events = Event.objects.filter(match_id__in=match_ids).filter(its_seat)
    forced = []
    for event in events.filter(forced=True).order_by("-match_id", "-seq")[:RECENT_FORCED]:
        forced.append({"match_id": event.match_id, "step": event.step, "seq": event.seq, "reason": event.reason,
                       "detail": event.detail if show_detail else None})
    think = events.filter(forced=False, think_ms__isnull=False).aggregate(mean=Avg("think_ms"), n=Count("pk"))
    timeouts = events.filter(forced=True).filter(reason__regex=TIMEOUT_REASON).count()
    forced_total = events.filter(forced=True).count()

    return {"rating": rating, "head_to_head": head_to_head, "finished": finished, "matches_seen": len(match_ids),
            "chart": chart, "recent": recent, "forced": forced, "forced_total": forced_total,
            "think_ms": think["mean"], "think_n": think["n"], "timeouts": timeouts}


def bot_page(request, bot_id: int):
    """``/bots/<id>/``: the page of one registered bot (404 for an unknown id)."""
    bot = RegisteredBot.objects.select_related("owner").filter(pk=bot_id).first()
    if bot is None:
        raise Http404("no such bot")
    user = request.user
    show_detail = user.is_authenticated and (user.pk == bot.owner_id or user.is_staff)
    try:
        spec = registry.get(bot.game)
    except KeyError:
        spec = None
    context = bot_summary(bot, show_detail=show_detail)
    rating = context["rating"]
    if rating is not None:
        context["rating_row"] = {"mu": rating.mu, "sigma": rating.sigma, "ordinal": rating.mu - 3 * rating.sigma,
                                 "matches": rating.matches,
                                 "win_rate": rating.wins / rating.matches if rating.matches else None}
    context.update({"bot": bot, "spec": spec, "title": spec.title if spec else bot.game,
                    "connects": bool(spec and spec.listens), "has_key": bool(bot.key_hash),
                    "show_detail": show_detail, "mine": user.is_authenticated and user.pk == bot.owner_id,
                    "max_matches": MAX_MATCHES, "recent_n": RECENT_MATCHES, "forced_n": RECENT_FORCED})
    return render(request, "arena/bot_page.html", context)
