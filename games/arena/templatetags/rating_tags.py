"""``{% load rating_tags %}``: rating figures on the pages, one rounding rule for all."""
from __future__ import annotations

from django import template

from games.arena import ratings

register = template.Library()


@register.filter
def rating(value):
    """``{{ rating.mu|rating }}``: a rating figure as :func:`games.arena.ratings.shown` writes
    it (the stored value, not one already rounded), "–" for none."""
    return "–" if value is None else ratings.shown(value)
