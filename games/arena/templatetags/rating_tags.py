"""``{% load rating_tags %}``: rating figures on the pages, one rounding rule for all."""
from __future__ import annotations

from django import template

from games.arena.ratings.rating import shown

register = template.Library()


@register.filter
def rating(value):
    """``{{ rating.mu|rating }}``: a rating figure as :func:`games.arena.ratings.rating.shown` writes
    it (the stored value, not one already rounded), "–" for none."""
    return "–" if value is None else shown(value)
