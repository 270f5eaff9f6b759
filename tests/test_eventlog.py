"""The event writer keeps every row the database accepts, even when one row is refused."""
import math

import pytest

from games.arena import tables
from games.arena.eventlog import EventWriter
from games.arena.models import Event

pytestmark = pytest.mark.django_db(transaction=True)


async def test_one_refused_row_does_not_take_the_batch_with_it():
    from asgiref.sync import sync_to_async

    match = await sync_to_async(tables.create_table)("liars_dice", {}, ["open_bot", "open_bot"], None)
    writer = EventWriter()
    writer.start()
    rows = [(match.pk, 1, 1, 0, ["bid", 3, 1], False, "", 1.0, ""),
            (match.pk, 2, 1, 1, ["bid", math.nan, 1], False, "", 1.0, ""),  # SQLite's JSON check refuses NaN
            (match.pk, 3, 2, 0, "challenge", False, "", 1.0, "")]
    writer.append(rows)
    await writer.close()
    stored = await sync_to_async(lambda: list(Event.objects.filter(match=match).values_list("seq", flat=True)))()
    assert sorted(stored) == [1, 3]
