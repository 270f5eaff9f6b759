"""hanab.live files: every exported game passes hanab.live's validity rules and replays there
(by a replay written here from its documented format, not from our rules) to the same score
and length; the compact /replay-json/ string decodes back to the game; imports replay through
our rules; bad files are refused with a reason; the match page opens the game there."""
from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.hanabi import bots, hanablive, rules

BASE62 = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def finished(players: int, seed: int, policy=bots.convention_bot) -> rules.HanabiState:
    state = rules.new_state({"players": players}, seed)
    rng = random.Random(seed)
    while not state.is_terminal():
        seat = state.on_turn
        state.apply({seat: policy(state.observation(seat), state.legal_actions(seat), rng)})
    return state


def hanablive_replay(game: dict) -> tuple[int, int, int]:
    """(score, strikes, actions) of ``game`` replayed as hanab.live plays "No Variant": cards
    dealt in deck order hand by hand, the new card drawn after a play or discard, a clue must
    name another player, three strikes or the final round (one turn each once the deck is
    out) or a perfect score end it; hanab.live counts a strike-out as 0."""
    assert 2 <= len(game["players"]) <= 6 and len(game["deck"]) == 50
    assert game["options"]["variant"] == "No Variant"
    n = len(game["players"])
    size = 5 if n <= 3 else 4
    hands = [list(range(p * size, (p + 1) * size)) for p in range(n)]
    next_card, stacks, strikes, clues, turn, turns_after_deck = n * size, [0] * 5, 0, 8, 0, None
    for number, action in enumerate(game["actions"]):
        assert set(action) >= {"type", "target"} and action["type"] in (0, 1, 2, 3)
        player = turn % n
        drew_last = False
        if action["type"] in (0, 1):
            order = action["target"]
            assert order in hands[player], (number, action)
            hands[player].remove(order)
            card = game["deck"][order]
            if action["type"] == 0 and stacks[card["suitIndex"]] == card["rank"] - 1:
                stacks[card["suitIndex"]] += 1
                if card["rank"] == 5:
                    clues = min(8, clues + 1)
            elif action["type"] == 0:
                strikes += 1
            else:
                clues = min(8, clues + 1)
            if next_card < 50:
                hands[player].append(next_card)
                next_card += 1
                drew_last = next_card == 50
        else:
            assert action["target"] != player and 0 <= action["target"] < n and clues > 0
            assert 0 <= action["value"] <= 4 if action["type"] == 2 else 1 <= action["value"] <= 5
            clues -= 1
        turn += 1
        if turns_after_deck is not None:
            turns_after_deck += 1
        if drew_last:  # the final round: one more turn for each player from the next one on
            turns_after_deck = 0
        if strikes == 3 or sum(stacks) == 25 or turns_after_deck == n:
            assert number == len(game["actions"]) - 1, "the game ends at its last action"
            return sum(stacks), strikes, number + 1
    raise AssertionError("the game does not end")


def decode(compact: str) -> dict:
    """hanab.live's compact game string read back, from its documented layout."""
    deck_part, actions_part, variant = compact.replace("-", "").split(",")
    players, low, high = int(deck_part[0]), int(deck_part[1]), int(deck_part[2])
    span = high - low + 1
    deck = [{"suitIndex": BASE62.index(c) // span, "rank": BASE62.index(c) % span + low} for c in deck_part[3:]]
    first, last = int(actions_part[0]), int(actions_part[1])
    types = last - first + 1
    actions = []
    for i in range(2, len(actions_part), 2):
        index = BASE62.index(actions_part[i])
        actions.append({"type": index % types + first, "target": BASE62.index(actions_part[i + 1]),
                        "value": index // types - 1})
    return {"players": players, "deck": deck, "actions": actions, "variant": int(variant)}


@settings(max_examples=40, deadline=None)
@given(players=st.integers(2, 5), seed=st.integers(0, 2**32), smart=st.booleans())
def test_exports_are_valid_there_and_replay_to_the_same_score(players, seed, smart):
    state = finished(players, seed, bots.convention_bot if smart else bots.random_bot)
    names = [f"p{i}" for i in range(players)]
    game = hanablive.export_game(names, state.faces, state.history)
    json.dumps(game)
    score, strikes, length = hanablive_replay(game)
    assert length == len(state.history) and strikes == 3 - state.err_tokens
    assert score == state.score()
    back = hanablive.import_game(json.dumps(game))
    assert back["names"] == names and back["steps"] == [(i % players, a) for i, a in enumerate(state.history)]
    compact = hanablive.compact(game)
    assert all(len(part) <= 20 for part in compact.split("-"))
    decoded = decode(compact)
    assert decoded == {"players": players, "deck": game["deck"], "actions": game["actions"], "variant": 0}
    assert hanablive.replay_url(game).startswith("https://hanab.live/replay-json/")


def test_an_export_of_hanablive_imports_with_its_extra_fields():
    state = finished(3, 4)
    game = hanablive.export_game(["Alice", "Bob", "Cathy"], state.faces, state.history)
    game.update({"id": 123456, "notes": [[], [], []], "seed": "p3v0s1", "characters": []})
    game["options"]["startingPlayer"] = 0
    for action in game["actions"]:
        if action["type"] in (0, 1):
            del action["value"]  # hanab.live leaves it out for plays and discards
    parsed = hanablive.import_game(json.dumps(game))
    assert parsed["config"]["players"] == 3 and len(parsed["steps"]) == len(state.history)


@pytest.mark.parametrize("change, reason", [
    (lambda g: g["options"].update(variant="Rainbow (6 Suits)"), "only 'No Variant'"),
    (lambda g: g.update(players=g["players"] * 3), "2 to 5 players"),
    (lambda g: g["deck"].pop(), "deck must list 50"),
    (lambda g: g["deck"].__setitem__(0, {"suitIndex": 7, "rank": 1}), "is not a card"),
    (lambda g: g["actions"].__setitem__(0, {"type": 9, "target": 0}), "unknown type 9"),
    (lambda g: g["actions"].__setitem__(0, {"type": 0, "target": 49}), "is not legal here"),
    (lambda g: g["actions"].insert(3, {"type": 4, "target": 0, "value": 4}), "ended early"),
    (lambda g: g["actions"].pop(), "does not reach its end"),
    (lambda g: g.update(actions=[[[[[1]]]]]), "nested deeper"),
])
def test_bad_files_are_refused_with_a_reason(change, reason):
    state = finished(2, 9)
    game = hanablive.export_game(["a", "b"], state.faces, state.history)
    change(game)
    with pytest.raises(ValueError, match=reason):
        hanablive.import_game(json.dumps(game))
    with pytest.raises(ValueError, match="not JSON"):
        hanablive.import_game("{")


@pytest.mark.django_db
def test_the_match_page_opens_a_finished_game_in_hanablive_and_imports_come_back(client):
    state = finished(2, 21)
    game = hanablive.export_game(["Ann", "Ben"], state.faces, state.history)
    from django.core.files.uploadedfile import SimpleUploadedFile
    response = client.post("/import/hanabi/", {"log": SimpleUploadedFile("game.json", json.dumps(game).encode())})
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "Open in hanab.live" in page
    match_id = int(response["Location"].strip("/").split("/")[-1])
    opened = client.get(f"/matches/{match_id}/elsewhere/")
    assert opened.status_code == 302 and opened["Location"] == hanablive.replay_url(game)
    exported = json.loads(client.get(f"/matches/{match_id}/export/hanablive/").content)
    assert exported["deck"] == game["deck"] and exported["actions"] == game["actions"]
