"""Display names from untrusted input, shared by the arena and the games' transports (below
both, so that no game package imports the arena's seating module for it)."""
from __future__ import annotations

#: Longest display name kept (characters).
MAX_NAME = 40


def clean_name(name: str) -> str:
    """A display name from untrusted input: printable characters only, trimmed, at most
    :data:`MAX_NAME`.

    (It is escaped again wherever it is shown; this only keeps control characters and
    absurd lengths out of the database and the logs.)
    """
    text = "".join(ch for ch in str(name) if ch.isprintable()).strip()
    return text[:MAX_NAME]
