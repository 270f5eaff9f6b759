"""A registered bot's page (``/bots/<id>/``), what its author looks at first, and a person's
page (``/people/<username>/``), the same for the matches a logged-in person sat in.

Both show, for one game (a bot's own; a person's chosen with ``?game=``): results against each
opponent with the mean score difference and its 95% interval, the history of one pairing
(``?opponent=<identity key>``), the rating after each rated match (a Chart.js line chart,
served from our own static files, and the same numbers in a table), the recent matches, and the
recent forced moves with the think time and timeouts.  :func:`summary` computes all of it for
either page from a filter that selects the subject's seats.  A bot's header has its name, game,
owner, how its identity is verified and its rating; a person's has their rating in every game
they played, with a tab per game.

Bounds: everything is computed from the subject's last :data:`MAX_MATCHES` matches (of the game)
at most (the page says so); the lists show the last :data:`RECENT_MATCHES` matches and the last
:data:`RECENT_FORCED` forced moves.  A forced move's ``detail`` (which may name the seat's own
hidden information) is shown to the bot's owner, to the person themself and to staff only;
everyone else sees its public ``reason``.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import NamedTuple

from django.contrib.auth import get_user_model
from django.db.models import Avg, Count, Exists, Max, OuterRef, Q
from django.http import Http404
from django.shortcuts import render
from django.urls import reverse

from games.arena import registry
from games.arena.models import Event, Match, Rating, RatingChange, RegisteredBot, Seat
from games.arena.play import details

#: The most matches (its latest) the results, the rating chart and the think time look at.
MAX_MATCHES = 1000
#: How many of its latest matches the "Recent matches" list shows.
RECENT_MATCHES = 20
#: How many of its latest forced moves are listed.
RECENT_FORCED = 50
#: How many of a person's registered bots their page names (the Bots page lists them all).
PERSON_BOTS = 20
#: A forced move's public ``reason`` that says the seat said nothing before its deadline, as
#: the transports write it: "no answer within N s" (HTTP bots), "no reply within N s" (Liar's
#: Dice), "no move within N s" (people, Blokus), "no action within N s" (Hanabi), possibly
#: followed by what was played instead ("…: played by Random bot").
TIMEOUT_REASON = r"^no (answer|reply|move|action) within |timed out"


class Identity(NamedTuple):
    """Whoever sat at a seat, as these pages name and link them (see :func:`identity_of`)."""

    key: str
    name: str
    kind: str
    bot_id: int | None = None
    username: str | None = None

    @property
    def href(self) -> str | None:
        """Their page: a registered bot's or a person's; None for anyone else."""
        if self.bot_id is not None:
            return reverse("bot_page", args=[self.bot_id])
        if self.username:
            return reverse("person_page", args=[self.username])
        return None


@dataclass
class HeadToHead:
    """The subject's results against one opponent identity over its finished matches."""

    key: str
    name: str
    kind: str
    bot_id: int | None = None
    username: str | None = None
    href: str | None = None
    wins: int = 0
    draws: int = 0
    losses: int = 0
    differences: list[float] = field(default_factory=list)

    @property
    def matches(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def mean_difference(self) -> float | None:
        """Mean of (the subject's final score − the opponent's), None without a score."""
        return statistics.fmean(self.differences) if self.differences else None

    @property
    def ci95(self) -> float | None:
        """Half-width of the mean difference's 95% interval (normal approximation,
        1.96 · sd / √n); None below 2 scored matches."""
        n = len(self.differences)
        return 1.96 * statistics.stdev(self.differences) / math.sqrt(n) if n > 1 else None


#: At most this many bars in a pairing's score-difference chart (wider ranges are binned).
MAX_BARS = 21


def difference_bars(differences: list[float]) -> list[dict]:
    """The distribution of a pairing's score differences as bars ``[{"label", "count"}]``,
    lowest first: one bar per value when they are whole numbers spanning at most
    :data:`MAX_BARS` values (zeros between kept, so the shape is true), else
    :data:`MAX_BARS` equal bins labelled by their range.  Empty without differences."""
    if not differences:
        return []
    low, high = min(differences), max(differences)
    if all(float(d).is_integer() for d in differences) and high - low < MAX_BARS:
        counts = {int(v): 0 for v in range(int(low), int(high) + 1)}
        for d in differences:
            counts[int(d)] += 1
        return [{"label": f"{v:+d}" if v else "0", "count": n} for v, n in counts.items()]
    width = (high - low) / MAX_BARS or 1.0
    counts = [0] * MAX_BARS
    for d in differences:
        counts[min(int((d - low) / width), MAX_BARS - 1)] += 1
    return [{"label": f"{low + i * width:.3g} to {low + (i + 1) * width:.3g}", "count": n}
            for i, n in enumerate(counts)]


def identity_of(seat: Seat) -> Identity:
    """Whoever sat at ``seat``: a registered bot by its id (key ``bot:<id>``), a person by their
    account (``user:<id>``, with their username), a built-in bot by its name
    (``builtin:<name>``), otherwise the name shown, marked ``unverified`` (a bot without its
    key) or ``guest`` (a person without an account).  The keys are the rating subjects'
    (games/arena/ratings/rating.py) where there is one."""
    if seat.registered_bot_id is not None:
        name = seat.registered_bot.name if seat.registered_bot else seat.display_name
        return Identity(f"bot:{seat.registered_bot_id}", name, "bot", seat.registered_bot_id)
    if seat.user_id is not None:
        username = seat.user.get_username() if seat.user else None
        return Identity(f"user:{seat.user_id}", username or seat.display_name, "person", None, username)
    if seat.kind == Seat.Kind.BUILTIN and seat.builtin_bot:
        return Identity(f"builtin:{seat.builtin_bot}", seat.display_name or seat.builtin_bot, "built-in bot")
    kind = "unverified" if seat.kind == Seat.Kind.PROTOCOL else "guest"
    return Identity(f"{kind}:{seat.display_name}", seat.display_name or "?", kind)


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


def rating_facts(rating: Rating | None) -> dict | None:
    """``{"mu", "sigma", "ordinal" (μ − 3σ), "matches", "win_rate" (0..1, None before a
    match)}`` of ``rating``, as the pages' headers show it; None for no rating."""
    if rating is None:
        return None
    return {"mu": rating.mu, "sigma": rating.sigma, "ordinal": rating.mu - 3 * rating.sigma,
            "matches": rating.matches, "win_rate": rating.wins / rating.matches if rating.matches else None}


def summary(seats: Q, subject: str, game: str, *, show_detail: bool, opponent: str | None = None) -> dict:
    """Everything a bot's or a person's page shows of one game (see the module docstring), as
    plain data.

    ``seats`` selects the subject's own seats (``Q(registered_bot_id=…)`` for a bot;
    ``Q(user_id=…, kind="human", match__game=…)`` for a person); ``subject`` is its identity
    and rating key (``"bot:<id>"``, ``"user:<id>"``): other seats with that key at a table
    are copies of it, not opponents; ``game`` is the game whose :class:`Rating` is charted.
    ``opponent``, an identity key from ``head_to_head``, asks for that pairing's matches
    (``pairing``: newest first, one row per seat of the subject against one of theirs).
    ``show_detail``: whether forced moves carry their ``detail`` (else None).  Bounded by
    :data:`MAX_MATCHES`, :data:`RECENT_MATCHES` and :data:`RECENT_FORCED`."""
    seat_rows = list(Seat.objects.filter(seats).exclude(match__status=Match.Status.OPEN)
                     .order_by("-match__created_at", "-match_id").values_list("match_id", "index")[:MAX_MATCHES * 2])
    match_ids = list(dict.fromkeys(m for m, _ in seat_rows))[:MAX_MATCHES]
    mine: dict[int, list[int]] = {}
    for match_id, index in seat_rows:
        if match_id in mine or len(mine) < MAX_MATCHES:
            mine.setdefault(match_id, []).append(index)
    matches = {m.pk: m for m in Match.objects.filter(pk__in=match_ids)
               .prefetch_related("seats__registered_bot", "seats__user")}
    changes: dict[int, dict[int, int]] = {}
    for match_id, seat, rank in RatingChange.objects.filter(match_id__in=match_ids).values_list("match_id", "seat", "rank"):
        changes.setdefault(match_id, {})[seat] = rank

    # Results against each opponent (finished matches only), and one pairing's matches.
    opponents: dict[str, HeadToHead] = {}
    pairing = []
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
                if other.index in side or not other.occupied:
                    continue  # partners are not opponents
                who = identity_of(other)
                if who.key == subject:
                    continue  # nor are copies of itself
                row = opponents.get(who.key)
                if row is None:
                    row = opponents[who.key] = HeadToHead(who.key, who.name, who.kind, who.bot_id, who.username, who.href)
                outcome = None
                if ranks and index in ranks and other.index in ranks:
                    if ranks[index] < ranks[other.index]:
                        row.wins, outcome = row.wins + 1, "won"
                    elif ranks[index] == ranks[other.index]:
                        row.draws, outcome = row.draws + 1, "draw"
                    else:
                        row.losses, outcome = row.losses + 1, "lost"
                difference = None
                if me is not None and me.final_score is not None and other.final_score is not None:
                    difference = me.final_score - other.final_score
                    row.differences.append(difference)
                if who.key == opponent:
                    pairing.append({"match": match, "outcome": outcome or "–", "rated": match_id in changes,
                                    "score": me.final_score if me else None, "their_score": other.final_score,
                                    "difference": difference})
    head_to_head = sorted(opponents.values(), key=lambda r: (-r.matches, r.name.lower()))

    # The rating after each rated match (oldest first), within the same matches.
    rating = Rating.objects.filter(game=game, subject=subject).first()
    chart = []
    if rating is not None:
        for change in (RatingChange.objects.filter(rating=rating, match_id__in=match_ids)
                       .select_related("match").order_by("match__finished_at", "match_id")):
            # Stored values, rounded only where shown (rating.shown), as every rating figure.
            chart.append({"match": change.match_id, "mu": change.mu_after, "sigma": change.sigma_after,
                          "ordinal": change.mu_after - 3 * change.sigma_after,
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
        others = [(identity_of(s), s.final_score) for s in all_seats if s.index not in mine[match_id] and s.occupied]
        recent.append({"match": match, "outcome": outcome_word(ranks, index) if ranks else match.get_status_display(),
                       "score": me.final_score if me else None, "rated": match_id in changes,
                       "others": [{"name": who.name, "kind": who.kind, "bot_id": who.bot_id, "href": who.href,
                                   "score": score} for who, score in others]})

    # Forced moves, think time and timeouts at its seats in the same matches.
    its_seat = Exists(Seat.objects.filter(match_id=OuterRef("match_id"), index=OuterRef("seat")).filter(seats))
    events = Event.objects.filter(match_id__in=match_ids).filter(its_seat)
    forced = []
    for event in events.filter(forced=True).order_by("-match_id", "-seq")[:RECENT_FORCED]:
        forced.append({"match_id": event.match_id, "step": event.step, "seq": event.seq, "reason": event.reason,
                       "detail": event.detail if show_detail else None})
    think = events.filter(forced=False, think_ms__isnull=False).aggregate(mean=Avg("think_ms"), n=Count("pk"))
    timeouts = events.filter(forced=True).filter(reason__regex=TIMEOUT_REASON).count()
    forced_total = events.filter(forced=True).count()

    return {"rating": rating, "rating_row": rating_facts(rating), "head_to_head": head_to_head,
            "details_public": details.public(game),
            "finished": finished, "matches_seen": len(match_ids),
            "opponent_key": opponent, "opponent": opponents.get(opponent) if opponent else None, "pairing": pairing,
            "pairing_bars": difference_bars(opponents[opponent].differences) if opponent in opponents else [],
            "chart": chart, "recent": recent, "forced": forced, "forced_total": forced_total,
            "think_ms": think["mean"], "think_n": think["n"], "timeouts": timeouts,
            "max_matches": MAX_MATCHES, "recent_n": RECENT_MATCHES, "forced_n": RECENT_FORCED}


def bot_summary(bot: RegisteredBot, *, show_detail: bool, opponent: str | None = None) -> dict:
    """:func:`summary` of a registered bot: its seats, in its game."""
    return summary(Q(registered_bot_id=bot.pk), f"bot:{bot.pk}", bot.game, show_detail=show_detail, opponent=opponent)


def person_summary(user, game: str, *, show_detail: bool, opponent: str | None = None) -> dict:
    """:func:`summary` of a person (a ``User``): the seats they took in person in ``game``."""
    return summary(Q(user_id=user.pk, kind=Seat.Kind.HUMAN, match__game=game), f"user:{user.pk}", game,
                   show_detail=show_detail, opponent=opponent)


def bot_page(request, bot_id: int):
    """``/bots/<id>/?opponent=<key>``: the page of one registered bot (404 for an unknown id).
    Forced moves' details for its owner and staff only, but in a game whose details are
    public (:func:`games.arena.play.details.may_see`)."""
    bot = RegisteredBot.objects.select_related("owner").filter(pk=bot_id).first()
    if bot is None:
        raise Http404("no such bot")
    user = request.user
    show_detail = details.may_see(bot.game, user, holder=details.Holder(bot_owner_id=bot.owner_id))
    try:
        spec = registry.get(bot.game)
    except KeyError:
        spec = None
    mine = user.is_authenticated and user.pk == bot.owner_id
    context = bot_summary(bot, show_detail=show_detail, opponent=request.GET.get("opponent") or None)
    context.update({"bot": bot, "spec": spec, "title": spec.title if spec else bot.game,
                    "connects": bool(spec and spec.listens), "has_key": bool(bot.key_hash),
                    "show_detail": show_detail, "mine": mine, "query": "",
                    "words": {"subject": bot.name, "its": "its", "it": "it", "them": "it",
                              "not_played": "It has not played yet.",
                              "who_sees": "Only the bot's owner sees the full details.", **BOT_FORCED_WORDS}})
    return render(request, "arena/bot_page.html", context)


#: How a bot's page and a person's page name the moves the server made for the seat: a bot's
#: are "forced" (no answer in time, one it could not accept: the protocols' word); a person's
#: were made for them on timeout or while a stand-in played for them.
BOT_FORCED_WORDS = {
    "forced_title": "Forced moves", "forced_count": "Forced moves", "answers": "answer", "gave": "it gave",
    "forced_what": "A move is forced when the server plays for it: no answer in time, an answer it could not "
                   "accept, a disconnection.",
    "no_forced": "No forced move: it always answered in time with something the server could accept."}
YOUR_FORCED_WORDS = {
    "forced_title": "Moves made for you", "forced_count": "Moves made for you", "answers": "move", "gave": "you made",
    "forced_what": "The server makes a move for you when your time runs out, and while you are away or have "
                   "left the table (a stand-in plays for you).",
    "no_forced": "No move was made for you: you always moved in time."}
THEIR_FORCED_WORDS = {
    "forced_title": "Moves made for them", "forced_count": "Moves made for them", "answers": "move",
    "gave": "they made",
    "forced_what": "The server makes a move for a person when their time runs out, and while they are away or "
                   "have left the table (a stand-in plays for them).",
    "no_forced": "No move was made for them: they always moved in time."}


def person_page(request, username: str):
    """``/people/<username>/?game=<slug>&opponent=<key>``: a logged-in person's page (404 for an
    unknown username).  One game at a time: ``game`` if they played it, else the game of their
    latest match (an unknown or unplayed ``game`` is said and left out); tabs to each game they
    played and their rating in each at the top (a cooperative game: none), and the bots they
    registered (:data:`PERSON_BOTS` at most).  Forced moves' details for the person themself and
    staff only; a person who never played gets a page that says so."""
    person = get_user_model().objects.filter(**{get_user_model().USERNAME_FIELD: username}).first()
    if person is None:
        raise Http404("no such person")
    viewer = request.user
    me = viewer.is_authenticated and viewer.pk == person.pk
    theirs = details.Holder(user_id=person.pk)
    show_detail = details.may_see(None, viewer, holder=theirs)  # in every game
    name = person.get_username()
    # The games they played (seats in matches past their table's opening), latest first.
    played = list(Seat.objects.filter(user_id=person.pk, kind=Seat.Kind.HUMAN).exclude(match__status=Match.Status.OPEN)
                  .values("match__game").annotate(n=Count("match_id", distinct=True), latest=Max("match__created_at"))
                  .order_by("-latest"))
    ratings = {r.game: r for r in Rating.objects.filter(subject=f"user:{person.pk}")}
    order = {spec.slug: i for i, spec in enumerate(registry.all_games())}
    games = []
    for row in sorted(played, key=lambda r: (order.get(r["match__game"], len(order)), r["match__game"])):
        slug = row["match__game"]
        try:
            spec = registry.get(slug)
        except KeyError:
            spec = None
        games.append({"slug": slug, "title": spec.title if spec else slug, "matches": row["n"],
                      "cooperative": bool(spec and spec.cooperative), "listed": spec is not None,
                      "rating": rating_facts(ratings.get(slug))})
    titles = {g["slug"]: g["title"] for g in games}
    game = played[0]["match__game"] if played else None
    asked = request.GET.get("game", "")
    notice = None
    if asked in titles:
        game = asked
    elif asked and game is not None:
        asked_title = registry.get(asked).title if asked in order else f"“{asked[:40]}”"
        notice = f"{name} has not played {asked_title}: here is {titles[game]}."
    their_bots = RegisteredBot.objects.filter(owner_id=person.pk)
    bots = [{"pk": pk, "name": bot_name, "title": registry.get(slug).title if slug in order else slug}
            for pk, bot_name, slug in their_bots.order_by("game", "name").values_list("pk", "name", "game")[:PERSON_BOTS]]
    context = {"person": person, "me": me, "mine": me, "show_detail": show_detail, "games": games, "game": game,
               "notice": notice, "bots": bots,
               "more_bots": their_bots.count() - len(bots) if len(bots) == PERSON_BOTS else 0}
    if game is not None:
        spec = registry.get(game) if game in order else None
        show_detail = context["show_detail"] = details.may_see(game, viewer, holder=theirs)
        context.update(person_summary(person, game, show_detail=show_detail, opponent=request.GET.get("opponent") or None))
        context.update({"spec": spec, "title": titles[game], "query": f"game={game}&",
                        "words": {"subject": name, "its": "their", "it": "they", "them": "them",
                                  "not_played": f"They have not played {titles[game]} yet.",
                                  "who_sees": f"Only {name} sees the full details.",
                                  **(YOUR_FORCED_WORDS if me else THEIR_FORCED_WORDS)}})
    return render(request, "arena/person_page.html", context)
