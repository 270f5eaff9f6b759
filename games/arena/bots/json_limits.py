"""Bounds on JSON text from outside (log imports, bot frames, bot services' answers), checked
before it is parsed: parsed, a few bytes of JSON can cost a hundred bytes of objects (``{},``
is 3 bytes of text and about 70 bytes as a dict in a list), and nesting costs the parser's
stack.

The check is one linear pass whatever the text: its strings are cut out with a regular
expression whose quantifiers are possessive, so the matcher keeps no backtracking state (the
pattern ``"(?:[^"\\\\]|\\\\.)*"`` kept about 120 bytes per character of a long string, 540 MB
for one 4.5 MB string; the "unrolled" ``"[^"\\\\]*(?:\\\\.[^"\\\\]*)*"`` still kept that much
per escape), and a string left open runs to the end of the text, so no quote is tried twice.
What is left (brackets, commas, numbers, literals) is counted with ``str.count`` and, only
when there are more brackets than the depth allowed, summed in C (``bytes.translate``).
"""
from __future__ import annotations

import re
from itertools import accumulate

# A JSON string, or an unterminated one up to the end of the text (possessive: no backtracking).
_STRING_BYTES = re.compile(rb'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.DOTALL)
_STRING_TEXT = re.compile(r'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
#: ``[`` and ``{`` become 2, ``]`` and ``}`` become 0 (one is subtracted when summing).
_DEPTH_STEP = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")


def _unquoted(text: str | bytes) -> bytes:
    """``text`` without its strings, as bytes (outside strings JSON is ASCII)."""
    if isinstance(text, str):
        return _STRING_TEXT.sub("", text).encode("utf-8", "replace")
    return _STRING_BYTES.sub(b"", text)


def _depth(unquoted: bytes) -> int:
    steps = unquoted.translate(_DEPTH_STEP, _NOT_BRACKET)
    return max(accumulate(step - 1 for step in steps), default=0)


def json_too_deep(raw: str | bytes, limit: int) -> bool:
    """Whether the JSON text ``raw`` nests arrays/objects more than ``limit`` deep (brackets
    inside strings do not count).  A text with at most ``limit`` brackets is answered by one
    count, without the scan."""
    if isinstance(raw, str):
        if raw.count("[") + raw.count("{") <= limit:
            return False
    elif raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    return _depth(_unquoted(raw)) > limit


def json_size_problem(text: str | bytes, max_depth: int, max_values: int) -> str | None:
    """Why the JSON text ``text`` is too much to parse, in its uploader's terms, or None.

    ``max_depth``: arrays and objects nested at most this deep.  ``max_values``: at most this
    many values (numbers, strings, literals, arrays, objects; an object's key and its value
    count once), counted as commas plus opening brackets plus one outside strings, an upper
    bound for well-formed JSON.  The parse of a text that passes costs at most about 150
    bytes per value plus its strings (as ``str``, 1 to 4 bytes per character)."""
    unquoted = _unquoted(text)
    opening = unquoted.count(b"[") + unquoted.count(b"{")
    if opening > max_depth and _depth(unquoted) > max_depth:
        return f"nested deeper than {max_depth} levels"
    if unquoted.count(b",") + opening + 1 > max_values:
        return f"more than {max_values:,} JSON values"
    return None
