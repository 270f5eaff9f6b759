"""What the arena keeps: matches (tables before they start), their seats, and the event log.

The event log is the source of truth: replays, exports and results are derived from
``(Match.game, Match.config, Match.seed, events)`` by re-running the rules.
"""
from django.conf import settings
from django.db import models


class Match(models.Model):
    """One table and, once every seat is taken, the match played at it."""

    class Status(models.TextChoices):
        OPEN = "open", "waiting for players"
        RUNNING = "running", "running"
        FINISHED = "finished", "finished"
        ABORTED = "aborted", "aborted"

    game = models.CharField(max_length=32, db_index=True)
    config = models.JSONField(default=dict)
    seed = models.BigIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN, db_index=True)
    #: Created by the arena for bots that found no open seat (the reference simulator's table).
    auto = models.BooleanField(default=False)
    #: Made from an uploaded log file rather than played here.
    imported = models.BooleanField(default=False)
    #: Spectators may see every hand while no person is seated.
    omniscient = models.BooleanField(default=False)
    #: Only bots that presented their key (:mod:`games.arena.bots.bot_keys`) may take its bot seats.
    verified_only = models.BooleanField(default=False)
    #: The table's pace: the least time from one move's request to the next, in seconds (0:
    #: full speed), so that spectators can follow a match of bots (:class:`MatchRunner`).
    pace_s = models.FloatField(default=0.0)
    #: The bots' thinking time per move at this table, in seconds; None: the game's default
    #: deadline setting (``GameSpec.bot_deadline_setting``, e.g. ``HANABI_BOT_DEADLINE``).
    think_s = models.FloatField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True, db_index=True)
    #: ``{"scores": [...], "winner": seat | None, ...}`` from the rules, or the abort reason.
    result = models.JSONField(null=True, blank=True)
    #: The last state's view with every hand, stored when the match ends, so a finished
    #: match's page never re-runs its whole log.
    final_view = models.JSONField(null=True, blank=True)
    #: Who created the table, for the per-minute creation limit: ``"user:<id>"`` or
    #: ``"ip:<address>"`` (empty for tables the arena creates).
    creator_key = models.CharField(max_length=64, blank=True, db_index=True)
    #: The arena process (:class:`ArenaProcess` ``name``) that owns this table: while it is
    #: open, the arena whose connected bots sit at it (only it can start it: it holds their
    #: connections); while it runs, the arena running it.  Empty: no arena holds it yet, and
    #: any arena may claim it (docs/architecture.md, *Several arenas*).
    owner = models.CharField(max_length=64, blank=True, db_index=True)
    #: Until when ``owner``'s claim holds; its arena renews it while it lives.  A running match
    #: whose lease expired is aborted by whichever arena notices, an open table's bot seats freed.
    lease_until = models.DateTimeField(null=True, blank=True)
    #: How many times a run of this match began; a result is recorded only by the run whose
    #: attempt number and owner the row still holds.
    attempt = models.PositiveIntegerField(default=0)
    #: The tournament's planned game this match plays (:class:`TournamentGame`); None outside
    #: tournaments.  At most one match of a planned game is not aborted (the constraint below):
    #: a match aborted when its arena died is played again, from the same seed.
    tournament_game = models.ForeignKey("TournamentGame", null=True, blank=True, related_name="matches",
                                        on_delete=models.SET_NULL)
    #: Whether its result feeds the ratings (False: an unrated tournament's match).
    rated = models.BooleanField(default=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "matches"
        constraints = [
            models.UniqueConstraint(fields=["tournament_game"], name="one_live_match_per_tournament_game",
                                    condition=models.Q(tournament_game__isnull=False) & ~models.Q(status="aborted")),
        ]

    def __str__(self):
        return f"{self.game} #{self.pk} ({self.status})"


class Seat(models.Model):
    """A place at a table.  ``occupied`` is False while it waits for a person or a bot."""

    class Kind(models.TextChoices):
        HUMAN = "human", "person"
        PROTOCOL = "protocol", "bot over the protocol"
        BUILTIN = "builtin", "built-in bot"

    match = models.ForeignKey(Match, related_name="seats", on_delete=models.CASCADE)
    index = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=10, choices=Kind.choices)
    builtin_bot = models.CharField(max_length=32, blank=True)
    #: A bot the server calls over HTTP (seated from the create-table form).
    registered_bot = models.ForeignKey("RegisteredBot", null=True, blank=True, on_delete=models.SET_NULL)
    #: A connecting bot's seat held for ``registered_bot`` (its owner seated it by name): only
    #: that bot's key takes it, and it stays held when the bot leaves before the start.
    reserved = models.BooleanField(default=False)
    occupied = models.BooleanField(default=False)
    display_name = models.CharField(max_length=64, blank=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    #: The guest's session that took this seat (guests are session-bound).
    session_key = models.CharField(max_length=64, blank=True)
    final_score = models.FloatField(null=True, blank=True)
    #: A prepared table's reservation (an organiser's code for this seat), stored as the
    #: SHA-256 hex of the code: any arena seats the bot that presents it, and the code itself
    #: is never kept.  Empty for a seat without one.
    reservation = models.CharField(max_length=64, blank=True, db_index=True)

    class Meta:
        ordering = ["match", "index"]
        constraints = [
            models.UniqueConstraint(fields=["match", "index"], name="unique_seat_index"),
            # One seat per person and table, whatever races between two requests.
            models.UniqueConstraint(fields=["match", "user"], condition=models.Q(user__isnull=False),
                                    name="one_seat_per_user"),
            models.UniqueConstraint(fields=["match", "session_key"], condition=~models.Q(session_key=""),
                                    name="one_seat_per_guest_session"),
        ]

    def __str__(self):
        return f"seat {self.index} of match {self.match_id}: {self.display_name or self.kind}"

    @property
    def unverified(self) -> bool:
        """A bot that connected without presenting its key (games/arena/bots/bot_keys.py): its name
        is only what it said, and is marked so wherever it is shown."""
        return self.kind == self.Kind.PROTOCOL and self.occupied and self.registered_bot_id is None


class Event(models.Model):
    """One seat's answer at one step of a match, appended as it happens.

    ``step`` groups the answers applied together (Liar's Dice asks every player each move);
    ``forced`` marks answers the server supplied (timeout, malformed reply, disconnect) with
    ``reason``, which carries public facts only (it is shown to everyone live), and ``detail``,
    the full explanation that may name the seat's own hidden information (shown live only to
    that seat; once the match is over, to whom :func:`games.arena.play.details.may_see` allows:
    an identity's owner, or everyone for a seat of no identity or a game that hides nothing);
    ``think_ms`` is the time from request to answer.
    """

    # No index of its own: the unique (match, seq) index serves every lookup by match, and a
    # second index cost every event batch a page more to write (about a sixth of its SQLite work).
    match = models.ForeignKey(Match, related_name="events", on_delete=models.CASCADE, db_index=False)
    seq = models.PositiveIntegerField()
    step = models.PositiveIntegerField()
    seat = models.PositiveSmallIntegerField()
    action = models.JSONField(null=True)
    forced = models.BooleanField(default=False)
    reason = models.CharField(max_length=200, blank=True)
    detail = models.CharField(max_length=300, blank=True)
    think_ms = models.FloatField(null=True)

    class Meta:
        ordering = ["match", "seq"]
        constraints = [models.UniqueConstraint(fields=["match", "seq"], name="unique_event_seq")]

    def __str__(self):
        return f"match {self.match_id} #{self.seq} seat {self.seat}: {self.action}"


class RegisteredBot(models.Model):
    """A logged-in user's bot: its identity, one name per game that nobody else can take.

    Two cases, as the game's doors say (``GameSpec.calls_bots``): a service the server calls
    over HTTP (Jass: ``base_url`` is checked by :func:`games.arena.bots.http_bots.check_url`;
    ``path_style`` picks the endpoint names the game's codec appends to it; ``last_check``
    keeps what it answered to the last "test the connection"), or a bot that connects to one
    of the game's ports and presents its key (``key_hash``: SHA-256 of the key,
    :mod:`games.arena.bots.bot_keys`; the key itself is shown to the owner once and never stored).
    """

    class PathStyle(models.TextChoices):
        SEED = "seed", "seed style: /select_trump, /play_card, /game_info"
        KIT = "kit", "kit style: /action_trump, /action_play_card, /game_info"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, related_name="bots", on_delete=models.CASCADE)
    game = models.CharField(max_length=32, db_index=True)
    name = models.CharField(max_length=40)
    base_url = models.CharField(max_length=300, blank=True)
    path_style = models.CharField(max_length=8, choices=PathStyle.choices, default=PathStyle.KIT)
    created_at = models.DateTimeField(auto_now_add=True)
    #: Only the owner sees what the last test answered (it may be an internal service's text).
    last_check = models.JSONField(null=True, blank=True)
    last_checked_at = models.DateTimeField(null=True, blank=True)
    #: Whether other users may seat this bot at their tables (the owner always may).
    shared = models.BooleanField(default=False)
    #: Hex SHA-256 of a connecting bot's key ("" for HTTP bots, or before a key was made).
    key_hash = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        ordering = ["game", "name"]
        constraints = [
            models.UniqueConstraint(fields=["game", "name"], name="unique_bot_name_per_game"),
            models.UniqueConstraint(fields=["key_hash"], condition=~models.Q(key_hash=""), name="unique_bot_key"),
        ]

    def __str__(self):
        return f"{self.name} ({self.game}{', ' + self.base_url if self.base_url else ''})"


class Snapshot(models.Model):
    """The rules state of a match after ``step``, kept so that a replay page starts from the
    nearest snapshot instead of re-running the log from its first step.

    ``state`` is a pickle of ``{"state": <the game's State>, "seq": <the last event applied>}``
    (:func:`games.arena.play.replay.pack_snapshot`; written and read only by this server; a
    snapshot that no longer loads, e.g. after a rules change, is ignored and the replay runs
    from the nearest earlier one or from the start).
    """

    match = models.ForeignKey(Match, related_name="snapshots", on_delete=models.CASCADE)
    step = models.PositiveIntegerField()
    state = models.BinaryField()

    class Meta:
        ordering = ["match", "step"]
        constraints = [models.UniqueConstraint(fields=["match", "step"], name="unique_snapshot_step")]


class Rating(models.Model):
    """One identity's rating in one game (games/arena/ratings/rating.py): openskill's ``mu`` and
    ``sigma`` (its conservative estimate is ``mu - 3 * sigma``), with the matches it counted.

    ``subject`` names the identity: ``"bot:<id>"`` (a :class:`RegisteredBot`), ``"user:<id>"``
    (a logged-in person) or ``"builtin:<name>"``; ``name`` is how it was first shown."""

    game = models.CharField(max_length=32)
    subject = models.CharField(max_length=48)
    name = models.CharField(max_length=64, blank=True)
    registered_bot = models.ForeignKey(RegisteredBot, null=True, blank=True, on_delete=models.CASCADE)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE)
    builtin_bot = models.CharField(max_length=32, blank=True)
    mu = models.FloatField()
    sigma = models.FloatField()
    matches = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    last_match_id = models.BigIntegerField(null=True, blank=True)
    last_seen = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["game", "subject"], name="one_rating_per_game")]

    def __str__(self):
        return f"{self.name} ({self.game}): {self.mu:.2f} ± {self.sigma:.2f}"


class RatingChange(models.Model):
    """What one rated match did to one seat's rating: before and after (the rating over time;
    :func:`games.arena.ratings.rating.recompute` rebuilds them)."""

    match = models.ForeignKey(Match, related_name="rating_changes", on_delete=models.CASCADE)
    rating = models.ForeignKey(Rating, related_name="changes", on_delete=models.CASCADE)
    seat = models.PositiveSmallIntegerField()
    rank = models.PositiveSmallIntegerField()
    mu_before = models.FloatField()
    sigma_before = models.FloatField()
    mu_after = models.FloatField()
    sigma_after = models.FloatField()

    class Meta:
        indexes = [models.Index(fields=["rating", "match"], name="ratingchange_rating_match")]


class ApiToken(models.Model):
    """A person's API token (games/arena/bots/api_tokens.py): their scripts read the JSON API as
    them, so they see what the pages show them (their bots' forced-move details).  One per
    user, shown once when made; only its SHA-256 is kept.  Replacing it makes a new one;
    revoking it deletes the row."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, related_name="api_token", on_delete=models.CASCADE)
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    #: When a request last presented it (to the minute: not written on every request).
    last_used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"API token of {self.user}"


class NameKey(models.Model):
    """One look-alike key of a registered name (games/arena/bots/names.py): a username (scope
    ``"user"``) or a registered bot's name (scope ``"bot:<game>"``) holds the keys of
    :func:`~games.arena.bots.names.name_keys`, and no two names hold the same key in a scope, so
    ``alice``, ``ALICE``, ``aIice``, ``alice.`` and Cyrillic ``аlice`` cannot all be registered,
    whichever way a row is written (forms, admin, shell) and whatever races.  Written with the
    name by the ``pre_save``/``post_save`` handlers in :mod:`games.arena.bots.names`; deleted with
    its holder."""

    scope = models.CharField(max_length=40)
    #: SHA-256 hex of the name's folded, skeleton form (:func:`games.arena.bots.names.name_keys`).
    key = models.CharField(max_length=64)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, related_name="+",
                             on_delete=models.CASCADE)
    bot = models.ForeignKey(RegisteredBot, null=True, blank=True, related_name="+", on_delete=models.CASCADE)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scope", "key"], name="unique_name_key"),
            models.CheckConstraint(condition=models.Q(user__isnull=True) ^ models.Q(bot__isnull=True),
                                   name="name_key_one_holder"),
        ]

    def __str__(self):
        return f"{self.scope} name key of {self.user or self.bot}"


class Analysis(models.Model):
    """One part of a finished match's analysis (games/arena/play/analyses.py; a bridge board's
    double-dummy table and par), computed by the arena after the match and kept here.

    ``part`` is the part's place in the match (from 0; a bridge board's place in
    ``result["boards"]``); ``subject`` is what the game analyses (JSON, from
    ``GameSpec.analysis_subjects``), stored with the match's end so that the work survives a
    restart; ``result`` is the game's answer, None while pending; ``tries`` counts failed
    attempts and ``error`` says the last one's cause (after ``analyses.MAX_TRIES`` the part is
    given up and stays without a result)."""

    match = models.ForeignKey(Match, related_name="analyses", on_delete=models.CASCADE)
    part = models.PositiveIntegerField()
    subject = models.JSONField()
    result = models.JSONField(null=True, blank=True)
    tries = models.PositiveSmallIntegerField(default=0)
    error = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["match", "part"]
        constraints = [models.UniqueConstraint(fields=["match", "part"], name="unique_analysis_part")]
        # the arena's queue: pending parts, oldest first (a partial index stays as small as the queue)
        indexes = [models.Index(fields=["id"], name="analysis_pending", condition=models.Q(result__isnull=True))]


class ArenaProcess(models.Model):
    """One running arena process (``manage.py serve`` with the arena role): its name, the
    channel-layer channel its control messages go to, and until when it is known alive (it
    renews ``alive_until`` with its matches' leases).  Web processes find a match's arena
    through ``Match.owner``; a row whose ``alive_until`` passed is a dead arena's, removed by
    the first arena that notices (docs/architecture.md, *Several arenas*)."""

    name = models.CharField(max_length=64, unique=True)
    channel = models.CharField(max_length=200)
    host = models.CharField(max_length=255, blank=True)
    pid = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(auto_now_add=True)
    alive_until = models.DateTimeField(db_index=True)

    def __str__(self):
        return f"arena {self.name} (pid {self.pid} on {self.host})"


class Tournament(models.Model):
    """A tournament: entrants (:class:`Entrant`), a format's plan of games
    (:class:`TournamentGame`) and the matches that play them, which the arenas create, claim
    and run by themselves (games/arena/tournaments/schedule.py; docs/architecture.md,
    *Tournaments*)."""

    class Format(models.TextChoices):
        ROUND_ROBIN = "round_robin", "round robin"
        DUPLICATE = "duplicate", "duplicate"
        SWISS = "swiss", "Swiss"
        #: Bridge pair events (games/arena/tournaments/formats.py's movements): pairs move
        #: between tables, the boards between them, scored across the field.
        MITCHELL = "mitchell", "Mitchell movement (bridge pairs)"
        HOWELL = "howell", "Howell movement (bridge pairs)"

    class Scoring(models.TextChoices):
        """How a bridge pair event compares the scores of one board across the tables."""

        MATCHPOINTS = "matchpoints", "matchpoints (Law 78A)"
        CROSS_IMPS = "cross_imps", "cross-IMPs (Law 78B)"

    class Status(models.TextChoices):
        SCHEDULED = "scheduled", "scheduled"
        RUNNING = "running", "running"
        FINISHED = "finished", "finished"
        CANCELLED = "cancelled", "cancelled"

    name = models.CharField(max_length=100)
    game = models.CharField(max_length=32)
    config = models.JSONField(default=dict)
    format = models.CharField(max_length=12, choices=Format.choices)
    #: Round robin: matches per pairing; duplicate: deals per pairing (each played once per
    #: rotation of the sides); Swiss: unused (1); a bridge movement: boards per round.
    per_pairing = models.PositiveIntegerField(default=1)
    #: Swiss: the number of rounds; round robin and duplicate: set from the plan.
    rounds = models.PositiveIntegerField(default=0)
    #: The round being played (Swiss pairs a round when the one before it is over).
    round = models.PositiveIntegerField(default=0)
    #: The most matches of this tournament running at once, over every arena.
    at_once = models.PositiveIntegerField(default=4)
    think_s = models.FloatField(null=True, blank=True)
    pace_s = models.FloatField(default=0.0)
    rated = models.BooleanField(default=True)
    #: Entrants may join until half the rounds are played (Swiss only; lichess's rule).
    late_join = models.BooleanField(default=False)
    #: Seconds a match waits for an entrant that connects (a bot over TCP or WebSocket, a
    #: person) before that entrant forfeits it.
    wait_s = models.FloatField(default=60.0)
    #: Two entrants: stop once one is better with 95% confidence (games/arena/tournaments/stats.py).
    early_stop = models.BooleanField(default=False)
    #: A bridge pair event's scoring across the field (:class:`Scoring`); empty otherwise.
    scoring = models.CharField(max_length=12, choices=Scoring.choices, blank=True)
    #: Every deal's seed derives from this one (schedule.deal_seed): equal deals, equal seeds.
    seed = models.BigIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.SCHEDULED, db_index=True)
    #: Why it ended as it did (an early stop's finding, a cancellation's reason).
    note = models.CharField(max_length=300, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    starts_at = models.DateTimeField(db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"tournament {self.pk} {self.name!r} ({self.game}, {self.format}, {self.status})"


class Entrant(models.Model):
    """One entrant of a tournament: a built-in bot, a registered bot (called over HTTP, or
    connecting with its key) or a person.  In a partnership game an entrant holds every seat
    of its side (its team is two of itself)."""

    tournament = models.ForeignKey(Tournament, related_name="entrants", on_delete=models.CASCADE)
    #: 0, 1, ... in the order of entry: the plan (:class:`TournamentGame` ``sides``) names entrants so.
    index = models.PositiveSmallIntegerField()
    builtin_bot = models.CharField(max_length=32, blank=True)
    registered_bot = models.ForeignKey(RegisteredBot, null=True, blank=True, on_delete=models.SET_NULL)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    #: A bridge pair of two registered bots (JOIN-T names a partner): ``registered_bot`` sits
    #: in its side's first seat (North or East), this one in the second (South or West).
    partner_bot = models.ForeignKey(RegisteredBot, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="partner_entries")
    display_name = models.CharField(max_length=64)
    #: The first round it plays (a late entrant's missed rounds are byes).
    joined_round = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["tournament", "index"]
        constraints = [models.UniqueConstraint(fields=["tournament", "index"], name="unique_entrant_index")]

    def __str__(self):
        return f"entrant {self.index} of tournament {self.tournament_id}: {self.display_name}"


class TournamentGame(models.Model):
    """One game of a tournament's plan: which entrant plays which side, on which deal.  It is
    done when a match of it finished, or when an entrant forfeited it (``forfeit``)."""

    tournament = models.ForeignKey(Tournament, related_name="games", on_delete=models.CASCADE)
    number = models.PositiveIntegerField()
    round = models.PositiveIntegerField()
    #: The entrant index per side, in the game's side order (GameSpec.teams, else each seat).
    sides = models.JSONField()
    #: Games with equal deals are played on equal seeds (duplicate).
    deal = models.PositiveIntegerField()
    #: ``{"absent": [entrant index, ...], "reason": "..."}`` when it was forfeited, not played.
    forfeit = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["tournament", "number"]
        constraints = [models.UniqueConstraint(fields=["tournament", "number"], name="unique_tournament_game")]

    def __str__(self):
        return f"game {self.number} of tournament {self.tournament_id}: {self.sides}"
