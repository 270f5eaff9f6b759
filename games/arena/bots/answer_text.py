"""What a bot service answered, as a person reads it: an HTML error page's own words without
its markup, whitespace runs as one space, a short excerpt (games/arena/bots/http_bots.py quotes it
in the errors a bot author sees: the connection test, forced moves' details)."""
from __future__ import annotations

import re
from html.parser import HTMLParser
from http import HTTPStatus


class _VisibleText(HTMLParser):
    """The text of an HTML page's content (not its title, scripts, styles, header, navigation
    or footer: an error page's own words come first)."""

    HIDDEN = {"title", "script", "style", "header", "nav", "footer"}
    #: Elements that start a new line: a space between their text and the next.
    BLOCKS = {"p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "br", "hr", "tr", "td", "th", "pre",
              "center", "section", "main", "article", "body", "ul", "ol", "table", "blockquote"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag, attrs):
        self.hidden += tag in self.HIDDEN
        if tag in self.BLOCKS:
            self.parts.append(" ")

    def handle_endtag(self, tag):
        if tag in self.HIDDEN and self.hidden:
            self.hidden -= 1
        if tag in self.BLOCKS:
            self.parts.append(" ")

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


#: The start of an HTML page (a web server's or framework's error page, usually).
_LOOKS_LIKE_HTML = re.compile(r"\s*<(?:!doctype|html|head|body|title|h1|p|div|center)\b", re.I)


def plain_excerpt(text: str, limit: int = 120) -> str:
    """At most ``limit`` characters of a bot's answer as a person reads it: an HTML page's
    visible text (a 404 page says "Not Found The requested URL was not found on the
    server...", not its markup), whitespace runs as one space, unprintable characters dropped,
    "…" where it was cut."""
    text = text[:20_000]  # an excerpt needs the start only; the parse stays cheap
    if _LOOKS_LIKE_HTML.match(text):
        reader = _VisibleText()
        reader.feed(text)
        reader.close()
        text = "".join(reader.parts)
    text = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def status_words(status: int, text: str) -> str:
    """An answer with HTTP ``status`` other than 200, in a bot author's terms: the status with
    its name and a short plain-text excerpt of what came with it ("HTTP status 404 Not Found
    (expected 200), answering “Not Found The requested URL…”")."""
    try:
        name = f" {HTTPStatus(status).phrase}"
    except ValueError:
        name = ""
    excerpt = plain_excerpt(text)
    said = f", answering \u201c{excerpt}\u201d" if excerpt else " with an empty answer"
    return f"HTTP status {status}{name} (expected 200){said}"
