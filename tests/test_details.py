"""The one rule for who may read a forced move's full detail (games/arena/play/details.py), which the
live views, the API, the downloads and the bot and person pages all ask: live only the seat's
own view; after the match its holder (the person, the bot's owner), staff, and everyone for a
seat of no identity; everyone always in a game without hidden information (Blokus)."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser

from games.arena.play.details import PUBLIC, Holder, may_see

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(django_user_model):
    make = django_user_model.objects.create_user
    return (make("ann", password="pw-ann-123"), make("bob", password="pw-bob-123"),
            make("sue", password="pw-sue-123", is_staff=True))


def test_live_only_the_seats_own_view_but_everyone_in_blokus():
    assert may_see("liars_dice", 1, seat=1)
    assert not may_see("liars_dice", 0, seat=1)
    assert not may_see("liars_dice", PUBLIC, seat=1)
    assert may_see("blokus", PUBLIC, seat=1) and may_see("blokus", 0, seat=1)


def test_after_the_match_the_holder_staff_and_for_no_identity_everyone(people):
    ann, bob, sue = people
    persons_seat, bots_seat, nobodys = Holder(user_id=ann.pk), Holder(bot_owner_id=bob.pk), Holder()
    for viewer, sees in ((ann, (True, False, True)), (bob, (False, True, True)), (sue, (True, True, True)),
                         (AnonymousUser(), (False, False, True)), (None, (False, False, True))):
        assert tuple(may_see("jass", viewer, holder=h) for h in (persons_seat, bots_seat, nobodys)) == sees, viewer
    assert may_see("blokus", None, holder=persons_seat)
    assert not may_see("no-such-game", None, holder=persons_seat)


def test_the_question_names_live_or_after():
    with pytest.raises(TypeError):
        may_see("jass", 0)
    with pytest.raises(TypeError):
        may_see("jass", 0, seat=0, holder=Holder())
