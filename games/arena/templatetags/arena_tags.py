"""Template helpers for the arena's pages."""
from __future__ import annotations

from django import template

from games.arena import registry
from games.arena.play import queries, tables

register = template.Library()


@register.filter
def result_sides(match):
    """``{% with sides=match|result_sides %}``: the match's result per team, or None
    (:func:`games.arena.play.queries.result_sides`)."""
    try:
        spec = registry.get(match.game)
    except KeyError:
        return None
    return queries.result_sides(match, spec)


@register.filter
def time_terms(match):
    """A table's own pace and thinking time (:func:`games.arena.play.tables.time_terms`)."""
    return tables.time_terms(match)
