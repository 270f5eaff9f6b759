"""Settings for the arena.

Embedded defaults (SQLite file under ``var/``, in-memory channel layer) need nothing installed
or started.  Every deployment knob is an environment variable; README.md lists them all.
"""
import os
import tempfile
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env_int(name: str, default: int) -> int:
    """Read an integer environment variable, falling back to ``default`` when unset or empty."""
    value = os.environ.get(name, "")
    return int(value) if value.strip() else default


def env_float(name: str, default: float) -> float:
    """Read a float environment variable (seconds, usually), ``default`` when unset or empty."""
    value = os.environ.get(name, "")
    return float(value) if value.strip() else default


DATA_DIR = Path(os.environ.get("ARENA_DATA_DIR", BASE_DIR / "var"))
DATA_DIR.mkdir(parents=True, exist_ok=True)

# A fixed development key is fine for the embedded default; deployments set their own.
SECRET_KEY = os.environ.get("SECRET_KEY", "arena-development-key-change-me-in-production-0123456789")
DEBUG = os.environ.get("DEBUG", "0") == "1"
# Local names only by default: the Host of HTTP requests and the Origin of WebSockets
# (webapp/asgi.py) must be one of these.  A deployment sets its public name (README).
ALLOWED_HOSTS = [h for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "games.arena",
    # Each game is an app whose ready() registers it; this order is the lobby's.
    "games.liars_dice",
    "games.jass",
    "games.blokus",
    "games.hanabi",
    "games.bridge",
    # django-ninja (the JSON API): its templates and the Swagger UI files it ships, served from
    # our /static/ (without it in INSTALLED_APPS the docs page would load them from a CDN).
    "ninja",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

# Request bodies (bounded, so an upload cannot exhaust memory): the server refuses bodies
# over ARENA["MAX_REQUEST_BYTES"] before buffering them
# (games/arena/management/commands/serve.py); within that, Django keeps at most this much of
# an uploaded file in memory (the rest goes to a temporary file) and refuses form fields (not
# files) of more than DATA_UPLOAD_MAX_MEMORY_SIZE in all.
FILE_UPLOAD_MAX_MEMORY_SIZE = 256 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 256 * 1024

ROOT_URLCONF = "webapp.urls"
ASGI_APPLICATION = "webapp.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'arena.sqlite3'}",
        conn_max_age=0,
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # WAL lets the web pages read while the arena writes events; a generous timeout rides out
    # the short write locks instead of failing a request.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    # Tests use a file too: SQLite's shared-cache in-memory database locks whole tables and
    # ignores the busy timeout, which the event writer's own thread would run into.
    DATABASES["default"]["TEST"] = {"NAME": os.path.join(tempfile.gettempdir(), f"arena-test-{os.getpid()}.sqlite3")}

REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL], "capacity": 1000, "expiry": 30,
                       "prefix": os.environ.get("ARENA_CHANNEL_PREFIX", "arena")},
        }
    }
    # Counters that every web process must share (login and signup throttles, connection
    # tests per minute) live in the same Redis; without it Django's default local-memory
    # cache counts per process, which is right for the one-process server.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": os.environ.get("ARENA_CHANNEL_PREFIX", "arena"),
        }
    }
else:
    # Channels' InMemoryChannelLayer with O(1) cleanup per message (see games/arena/play/layers.py).
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "games.arena.play.layers.LocalChannelLayer", "CONFIG": {"capacity": 1000}}
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 6}},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "lobby"
LOGOUT_REDIRECT_URL = "lobby"

# Mail (password reset links).  With EMAIL_HOST set, Django's SMTP backend sends it (the other
# EMAIL_* variables as Django names them); otherwise, on the embedded default, each mail is
# written as a file under <ARENA_DATA_DIR>/mail/ for whoever runs the server to read.
# EMAIL_BACKEND overrides both (e.g. django.core.mail.backends.console.EmailBackend).
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_PORT = env_int("EMAIL_PORT", 587)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = os.environ.get("EMAIL_USE_TLS", "1") == "1" and os.environ.get("EMAIL_USE_SSL", "0") != "1"
EMAIL_USE_SSL = os.environ.get("EMAIL_USE_SSL", "0") == "1"
EMAIL_TIMEOUT = 10
EMAIL_FILE_PATH = DATA_DIR / "mail"
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND") or (
    "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST else "django.core.mail.backends.filebased.EmailBackend")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "arena@localhost")

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Browser libraries from the npm registry, installed by scripts/setup.sh (package-lock.json):
# served from our own static files, never from a CDN.
STATICFILES_DIRS += [("vendor/chartjs", BASE_DIR / "node_modules" / "chart.js" / "dist")]
STATIC_ROOT = DATA_DIR / "static"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # httpx logs every request at INFO: one line per bot call would drown the log.
    "loggers": {"django.channels.server": {"level": "WARNING"}, "daphne": {"level": "WARNING"},
                "httpx": {"level": "WARNING"}, "httpcore": {"level": "WARNING"}},
}

# --- The arena -------------------------------------------------------------------------------
ARENA = {
    # Where the one-process server listens (HTTP and WebSockets).
    "HOST": os.environ.get("ARENA_HOST", "127.0.0.1"),
    "HTTP_PORT": env_int("ARENA_HTTP_PORT", 8000),
    # How long a person has to act on their turn, and to challenge when not on turn (seconds).
    "HUMAN_DEADLINE": env_float("ARENA_HUMAN_DEADLINE", 60.0),
    "HUMAN_CHALLENGE_WINDOW": env_float("ARENA_HUMAN_CHALLENGE_WINDOW", 6.0),
    # Liar's Dice: TCP listener and the automatic table's configuration (specs/liars-dice-tcp).
    "LIARS_DICE_HOST": os.environ.get("LIARS_DICE_HOST", os.environ.get("ARENA_HOST", "127.0.0.1")),
    "LIARS_DICE_PORT": env_int("LIARS_DICE_PORT", 5533),
    "LIARS_DICE_AUTO_PLAYERS": env_int("LIARS_DICE_AUTO_PLAYERS", 2),
    "LIARS_DICE_AUTO_DICE": env_int("LIARS_DICE_AUTO_DICE", 6),
    "LIARS_DICE_AUTO_GAMES": env_int("LIARS_DICE_AUTO_GAMES", 1),
    "LIARS_DICE_BOT_DEADLINE": env_float("LIARS_DICE_BOT_DEADLINE", 3.0),
    # Hanabi: bots over WebSocket JSON (specs/hanabi-ws.*) on their own port, every path (as
    # the original), served by `manage.py serve` (roles all and arena); also /ws/bots/hanabi/
    # on the main port.  A bot on turn that does not act within the deadline has a card
    # discarded for it.
    "HANABI_HOST": os.environ.get("HANABI_HOST", os.environ.get("ARENA_HOST", "127.0.0.1")),
    "HANABI_PORT": env_int("HANABI_PORT", 4444),
    "HANABI_BOT_DEADLINE": env_float("HANABI_BOT_DEADLINE", 10.0),
    # Seconds a full automatic Hanabi table (five bots) waits for one of them to send
    # GAME_START_REQUEST, as the original's clients do, before it starts by itself (0: never).
    "HANABI_FULL_TABLE_WAIT": env_float("HANABI_FULL_TABLE_WAIT", 60.0),
    # Blokus (Software-Challenge): the XML stream listener (specs/blokus-xml.*), bots and the
    # contest's admin clients on one port.  The admin password guards prepare/observe/pause/
    # step/cancel: set your own on any reachable server ("" switches admin access off).
    "BLOKUS_HOST": os.environ.get("BLOKUS_HOST", os.environ.get("ARENA_HOST", "127.0.0.1")),
    "BLOKUS_PORT": env_int("BLOKUS_PORT", 13050),
    "BLOKUS_ADMIN_PASSWORD": os.environ.get("BLOKUS_ADMIN_PASSWORD", "examplepassword"),
    # Wrong admin passwords an address may send before it must wait BLOKUS_ADMIN_BACKOFF
    # seconds, doubled with each further failure (at most 15 minutes): a handful of guesses a
    # minute, however fast it reconnects.
    "BLOKUS_ADMIN_FREE_FAILURES": env_int("BLOKUS_ADMIN_FREE_FAILURES", 3),
    "BLOKUS_ADMIN_BACKOFF": env_float("BLOKUS_ADMIN_BACKOFF", 2.0),
    # Prepared rooms waiting for their players at once; past it `prepare` is refused.
    "BLOKUS_MAX_PREPARED": env_int("BLOKUS_MAX_PREPARED", 100),
    # Seconds per move for slots that can time out (prepared slots unless canTimeout="false"):
    # a move after the soft limit loses (SOFT_TIMEOUT), none by the hard limit loses
    # (HARD_TIMEOUT), as on the official server.  Slots that "cannot time out" (plain joins,
    # canTimeout="false") still lose after BLOKUS_NO_TIMEOUT_HARD, so a silent bot cannot hold
    # a table for ever.
    "BLOKUS_SOFT_TIMEOUT": env_float("BLOKUS_SOFT_TIMEOUT", 2.0),
    "BLOKUS_HARD_TIMEOUT": env_float("BLOKUS_HARD_TIMEOUT", 10.0),
    "BLOKUS_NO_TIMEOUT_HARD": env_float("BLOKUS_NO_TIMEOUT_HARD", 60.0),
    # Bounds of the inbound XML stream, per connection: bytes, element depth (counting
    # <protocol>) and elements of one message; messages per second on average and at once (a
    # token bucket; past it the server stops reading from the connection for a while).
    "BLOKUS_MAX_MESSAGE_BYTES": env_int("BLOKUS_MAX_MESSAGE_BYTES", 64 * 1024),
    "BLOKUS_MAX_DEPTH": env_int("BLOKUS_MAX_DEPTH", 12),
    "BLOKUS_MAX_ELEMENTS": env_int("BLOKUS_MAX_ELEMENTS", 256),
    "BLOKUS_MESSAGES_PER_S": env_float("BLOKUS_MESSAGES_PER_S", 100.0),
    "BLOKUS_MESSAGES_BURST": env_int("BLOKUS_MESSAGES_BURST", 200),
    # Pause between the end of a round and the next move_request when a person is seated, so
    # they can read the revealed dice (seconds; bots-only tables never wait).
    "ROUND_PAUSE": env_float("ARENA_ROUND_PAUSE", 2.5),
    # The pace of the tables the server makes for connecting bots (automatic tables, prepared
    # rooms): at least this many seconds a move (0 to 10; 0: full speed, as the original
    # servers play).  Tables made on the web choose their own on the create-table form.
    "AUTO_TABLE_PACE": env_float("ARENA_AUTO_TABLE_PACE", 0.0),
    # Built-in bots wait this long before answering when a person is seated (seconds).
    "BUILTIN_DELAY": env_float("ARENA_BUILTIN_DELAY", 0.8),
    # Contract bridge: two bot doors (docs/bridge-protocol.md, the seed's text protocol in our
    # syntax; the Blue Chip Bridge table manager protocol that robots speak), the time a bot
    # has per call or card (then it passes, or plays its lowest legal card), and the
    # automatic table's configuration: boards, and instant replay (each board twice, the
    # hands turned one seat, scored in IMPs: the duplicate robots play at one table).
    "BRIDGE_HOST": os.environ.get("BRIDGE_HOST", os.environ.get("ARENA_HOST", "127.0.0.1")),
    "BRIDGE_PORT": env_int("BRIDGE_PORT", 5534),
    "BRIDGE_TABLE_MANAGER_PORT": env_int("BRIDGE_TABLE_MANAGER_PORT", 2000),
    "BRIDGE_BOT_DEADLINE": env_float("BRIDGE_BOT_DEADLINE", 30.0),
    # Seconds the table manager pauses before each line to a protocol-18 robot (older robots
    # lose lines that come too fast; the usual table managers pause 300 ms; none for 19).
    "BRIDGE_TABLE_MANAGER_PAUSE": env_float("BRIDGE_TABLE_MANAGER_PAUSE", 0.3),
    "BRIDGE_AUTO_BOARDS": env_int("BRIDGE_AUTO_BOARDS", 4),
    "BRIDGE_AUTO_REPLAY": env_int("BRIDGE_AUTO_REPLAY", 1) == 1,
    # Blokus: how long a person has to place a piece or skip (seconds).
    "BLOKUS_HUMAN_DEADLINE": env_float("BLOKUS_HUMAN_DEADLINE", 90.0),
    # Jass: how long a bot service may take to answer one request (seconds).
    "JASS_BOT_DEADLINE": env_float("JASS_BOT_DEADLINE", 10.0),
    # May HTTP bots live on loopback or private addresses?  Yes for local use; switch it off
    # ("0") on a public deployment so bot URLs cannot reach the server's own network.
    "BOT_URLS_ALLOW_PRIVATE": os.environ.get("ARENA_BOT_URLS_ALLOW_PRIVATE", "1") == "1",
    # "Test the connection": at most this many tests a minute per bot and per user, and this
    # many in flight per web process (their own connection pool, apart from match calls).
    "BOT_TESTS_PER_MINUTE": env_int("ARENA_BOT_TESTS_PER_MINUTE", 6),
    "BOT_TESTS_IN_FLIGHT": env_int("ARENA_BOT_TESTS_IN_FLIGHT", 20),
    # Failed logins a minute per address and per username, and accounts created an hour per
    # address; past them the form answers 429 "try again in N s" without checking the
    # password (games/arena/bots/throttle.py: counted in CACHES, shared when REDIS_URL is set).
    "LOGIN_FAILURES_PER_MINUTE": env_int("ARENA_LOGIN_FAILURES_PER_MINUTE", 5),
    # Wrong bot keys a clock minute per address (games/arena/bots/bot_keys.py); past it each wrong
    # key closes its connection (a right key always passes: keys are 192 random bits).
    "BOT_KEY_FAILURES_PER_MINUTE": env_int("ARENA_BOT_KEY_FAILURES_PER_MINUTE", 5),
    # Wrong personal API tokens a clock minute per address (games/arena/bots/api_tokens.py).
    "API_TOKEN_FAILURES_PER_MINUTE": env_int("ARENA_API_TOKEN_FAILURES_PER_MINUTE", 10),
    "SIGNUPS_PER_HOUR": env_int("ARENA_SIGNUPS_PER_HOUR", 10),
    # Password reset requests an hour per address and per email address typed (each may send
    # a mail); past it the form answers 429 and sends nothing (games/arena/web/accounts.py).
    "PASSWORD_RESETS_PER_HOUR": env_int("ARENA_PASSWORD_RESETS_PER_HOUR", 5),
    # Tables and matches created a minute per address and per user, whichever door they come
    # through (create-table form, "Play a bot now", log imports): fresh accounts from one
    # address share its budget.
    "TABLES_PER_MINUTE": env_int("ARENA_TABLES_PER_MINUTE", 10),
    # Tournaments a user creates a minute (the form and the API; each may plan thousands of
    # matches, which the arenas then run: games/arena/web/tournaments.py).
    "TOURNAMENTS_PER_MINUTE": env_int("ARENA_TOURNAMENTS_PER_MINUTE", 3),
    # Log imports tried a minute per address and per user (within TABLES_PER_MINUTE; refused
    # files count too, as reading one is the cost), and imports read at once per web process
    # (past it the page answers 503 "busy" after waiting IMPORT_WAIT seconds).
    "IMPORTS_PER_MINUTE": env_int("ARENA_IMPORTS_PER_MINUTE", 3),
    "IMPORTS_IN_FLIGHT": env_int("ARENA_IMPORTS_IN_FLIGHT", 2),
    "IMPORT_WAIT": env_float("ARENA_IMPORT_WAIT", 5.0),
    # Runners keep the rules state every this many steps, stored with the finished match so a
    # replay page re-runs at most this many steps, wherever it is in the match.
    "SNAPSHOT_EVERY": env_int("ARENA_SNAPSHOT_EVERY", 500),
    # Steps a match may take before it is stopped unfinished (aborted, its events kept): a
    # bound on what two bots that never end a round can write.  The longest Liar's Dice match
    # the table form allows took about 25,000 steps with bots that play as the reference's.
    "MAX_STEPS": env_int("ARENA_MAX_STEPS", 200_000),
    # Event rows queued for the writer before runners wait for it (bounded memory): a hard
    # crash loses at most about twice this many rows, the last ~2 ms of steps at full speed.
    "EVENTLOG_MAX_QUEUED": env_int("ARENA_EVENTLOG_MAX_QUEUED", 256),
    # A person who lets this many requests in a row run out is away: the stand-in plays for
    # them until they take their seat back.
    "HUMAN_ABSENT_AFTER": env_int("ARENA_HUMAN_ABSENT_AFTER", 3),
    # Minutes a match goes on with every person away (and every other seat that is not a
    # built-in bot gone) before it is abandoned; the stand-in plays meanwhile, and a person
    # who takes their seat back in time keeps it going.  Leaving on purpose ends it at once.
    "AWAY_GRACE": env_float("ARENA_AWAY_GRACE", 5.0),
    # Several arena processes on one database (docs/architecture.md, *Several arenas*): this
    # arena's name (default: host, process id and a random suffix, new at every start), and
    # the lease in seconds on what it owns (its matches, the open tables its bots sit at): it
    # renews them every third of it; an arena silent for longer is taken for dead, its running
    # matches aborted and its bots' seats freed by the arenas that live.
    "NAME": os.environ.get("ARENA_NAME", ""),
    "LEASE": env_float("ARENA_LEASE", 15.0),
    # Tables no arena holds (built-in bots, bots the server calls, people) are claimed by an
    # arena's sweep while it runs fewer matches than this; the rest waits for an arena with room.
    "CLAIM_RUNNING": env_int("ARENA_CLAIM_RUNNING", 50),
    # 1: every bot port (TCP, and the bot WebSocket ports) is bound with SO_REUSEPORT, so that
    # several arena processes on one host, all started so, share each bot port (the kernel
    # spreads new connections among them; a bot plays at the arena that accepted it).  0
    # (default): a port another process listens on is an error, and each arena takes its own.
    "REUSE_PORT": env_int("ARENA_REUSE_PORT", 0) == 1,
    # Bounds for untrusted input.
    "MAX_LINE_BYTES": env_int("ARENA_MAX_LINE_BYTES", 64 * 1024),
    "MAX_CONNECTIONS": env_int("ARENA_MAX_CONNECTIONS", 5000),
    # Admission at every bot port, per address (IPv6: per /64): connections held at once and
    # opened a second, so that one address can neither fill MAX_CONNECTIONS nor keep the
    # seating busy by reconnecting.  Addresses in ARENA_ADMISSION_EXEMPT (comma-separated
    # addresses or networks, "loopback" for 127.0.0.0/8 and ::1; "" for none) are not counted:
    # by default loopback, so a local tournament can run hundreds of bots from one machine.
    "MAX_CONNECTIONS_PER_ADDRESS": env_int("ARENA_MAX_CONNECTIONS_PER_ADDRESS", 32),
    "CONNECTIONS_PER_S_PER_ADDRESS": env_float("ARENA_CONNECTIONS_PER_S_PER_ADDRESS", 10.0),
    "ADMISSION_EXEMPT": os.environ.get("ARENA_ADMISSION_EXEMPT", "loopback"),
    # The same at the web port, before any request is read (games/arena/bots/daphne_admission.py):
    # larger, since a browser opens several connections per page and people share addresses
    # (NAT); the bot WebSocket ports (Hanabi's) take the bot ports' caps above.
    "WEB_MAX_CONNECTIONS_PER_ADDRESS": env_int("ARENA_WEB_MAX_CONNECTIONS_PER_ADDRESS", 128),
    "WEB_CONNECTIONS_PER_S_PER_ADDRESS": env_float("ARENA_WEB_CONNECTIONS_PER_S_PER_ADDRESS", 30.0),
    # Seconds a connection to the web port or a bot WebSocket port has for its request line
    # and headers, counted from the accept or, on a kept-alive connection, from the end of the
    # previous response (a client sending a header byte now and then is closed).
    "REQUEST_HEADERS_TIMEOUT": env_float("ARENA_REQUEST_HEADERS_TIMEOUT", 20.0),
    # Seconds a bot connection has for its first valid message (a Blokus join or authenticate;
    # a Liar's Dice name line, though a Liar's Dice bot that sends nothing at all is seated
    # after LIARS_DICE_SEAT_SILENT_AFTER, as the reference seats nameless bots), and for
    # finishing a message it has begun (a client sending a byte now and then is closed).
    "FIRST_MESSAGE_TIMEOUT": env_float("ARENA_FIRST_MESSAGE_TIMEOUT", 10.0),
    "MESSAGE_TIMEOUT": env_float("ARENA_MESSAGE_TIMEOUT", 10.0),
    "LIARS_DICE_SEAT_SILENT_AFTER": env_float("LIARS_DICE_SEAT_SILENT_AFTER", 1.0),
    # Connected bots waiting to be seated at once (each a small task; one at a time takes
    # database steps behind one lock); past it a bot is refused with a message rather than
    # queued.  Large enough for a local tournament whose bots all connect in the same second.
    "MAX_PENDING_SEATINGS": env_int("ARENA_MAX_PENDING_SEATINGS", 2000),
    # Each bot connection's share of the loop (so a flooder cannot starve matches): lines it
    # may send per second on average and at once (a token bucket; past it the server stops
    # reading from it for a while), and bad lines (unparseable, too long, unasked) before it
    # is disconnected.
    "LINES_PER_S": env_float("ARENA_LINES_PER_S", 200.0),
    "LINES_BURST": env_int("ARENA_LINES_BURST", 400),
    "MAX_BAD_LINES": env_int("ARENA_MAX_BAD_LINES", 100),
    # Largest HTTP request body (bytes), refused with 413 before it is buffered: a little over
    # the 5 MiB log upload (games/arena/web/exchange.py) plus its form fields.
    "MAX_REQUEST_BYTES": env_int("ARENA_MAX_REQUEST_BYTES", 5 * 1024 * 1024 + 64 * 1024),
    # Browser WebSockets (games/arena/web/consumers.py): messages a client may send per second on
    # average and at once (a token bucket; over it, the connection is closed with 4008), views
    # sent but not yet acknowledged (beyond them only the newest is kept), and seconds a client
    # with a full window may go without acknowledging before it is closed (4009).
    "WS_MESSAGES_PER_S": env_float("ARENA_WS_MESSAGES_PER_S", 30.0),
    "WS_BURST": env_int("ARENA_WS_BURST", 60),
    "WS_UNACKED_VIEWS": env_int("ARENA_WS_UNACKED_VIEWS", 32),
    "WS_ACK_TIMEOUT": env_float("ARENA_WS_ACK_TIMEOUT", 60.0),
}
