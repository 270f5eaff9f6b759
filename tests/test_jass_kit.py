"""Our Jass rules against the HSLU kit's own code (the ``jass-kit`` package, a test
dependency): the ``hslu_undertrump`` option must allow exactly the cards the kit's
``RuleSchieber.get_valid_cards`` allows, and the default (strict Swiss) rule exactly those
minus the under-trumps the kit lets through."""
from __future__ import annotations

import random

import numpy as np
import pytest
from jass.game.rule_schieber import RuleSchieber

from games.jass import rules

KIT_RULE = RuleSchieber()


def kit_valid(hand_mask: int, trick: list[int], trump: int) -> int:
    """The kit's valid cards as our 36-bit mask (the kit numbers cards as we do, DA=0 ... C6=35)."""
    hand = np.array([hand_mask >> c & 1 for c in range(36)], dtype=np.int32)
    valid = KIT_RULE.get_valid_cards(hand, np.array(trick + [-1] * (4 - len(trick))), len(trick), trump)
    return sum(1 << c for c in range(36) if valid[c])


def random_positions(count: int, seed: int):
    """Play-phase positions of random matches (one in the HSLU option, one strict), both rules'
    masks computed on the very same position."""
    rng = random.Random(seed)
    while count > 0:
        state = rules.new_state({"points_to_win": 1000, "hslu_undertrump": True}, rng.randrange(2**32))
        while not state.is_terminal() and count > 0:
            (seat,) = state.to_act()
            if state.phase == 1:  # play
                yield state
                count -= 1
            state.apply({seat: rng.choice(state.legal_actions(seat))})


def test_hslu_option_allows_exactly_what_the_kit_allows():
    differs = 0
    for state in random_positions(20000, seed=11):
        hand, trick, trump = state.hands[state.player], list(state.trick), state.trump
        ours = state.legal_mask()
        assert ours == kit_valid(hand, trick, trump), (rules.mask_to_names(hand), trick, trump)
        strict = rules.legal_cards(hand, trick, trump)
        assert strict & ours == strict, "the kit's rule only ever allows more"
        differs += strict != ours
    assert differs > 0, "the positions include ones where the two rules differ"


def test_the_hslu_option_accepts_an_under_trump_the_strict_rule_refuses():
    """A position where the kit lets a player under-trump the best trump: the strict rule
    refuses the card with a reason, the option accepts it."""
    for state in random_positions(20000, seed=5):
        hand, trick, trump = state.hands[state.player], list(state.trick), state.trump
        extra = state.legal_mask() & ~rules.legal_cards(hand, trick, trump)
        if extra:
            card = rules.CARD_NAMES[extra.bit_length() - 1]
            strict = state.clone()
            strict.hslu_undertrump = False
            assert "no under-trumping" in strict.why_illegal(state.player, card)
            assert state.why_illegal(state.player, card) is None
            return
    raise AssertionError("no position with a kit-only card found")


def test_a_300_game_file_written_by_the_kits_own_arena_imports_whole(tmp_path):
    """The kit's Arena plays 300 games of its random agents and writes its JSON-lines log; the
    arena imports every game of it (under the strict rule one under-trump refused the file)."""
    from jass.agents.agent_random_schieber import AgentRandomSchieber
    from jass.arena.arena import Arena as KitArena

    from games.jass.logs import import_match

    np.random.seed(7)
    kit = KitArena(nr_games_to_play=300, save_filename=str(tmp_path / "kit"), print_every_x_games=1000)
    kit.set_players(*(AgentRandomSchieber() for _ in range(4)))
    kit.play_all_games()
    text = (tmp_path / "kit0001.txt").read_text()
    assert len(text.splitlines()) == 300
    imported = import_match(text)
    state = rules.new_state(imported["config"], 0)
    for seat, action in imported["steps"]:
        state.apply({seat: action})
    assert state.is_terminal() and state.deal_number == 300
    # The kit scores every game without a Match bonus; so do we, game by game.
    assert [sum(r["points"]) for r in state.deal_records()] == [157] * 300
    assert state.match_points == [int(kit.points_team_0.sum()), int(kit.points_team_1.sum())]


@pytest.mark.django_db
def test_our_json_lines_are_games_the_kit_itself_replays_to_the_same_state(client):
    """Every exported line, read by the kit's own ``GameLogEntry``, is a state the kit's
    ``GameSim`` reaches by playing the game's cards from the hands as dealt (so hands, tricks,
    leaders, winners, points and the player on turn are what the kit writes); a game cut
    short at the target is written as a game in progress; re-importing the file gives the
    match's result (the target and the Match bonus travel with it)."""
    import json

    from django.core.files.uploadedfile import SimpleUploadedFile
    from jass.game.game_sim import GameSim
    from jass.logs.game_log_entry import GameLogEntry

    from games.arena.models import Match
    from tests.test_jass_logs import played_match

    match = played_match({"points_to_win": 1500, "match_bonus": True, "max_deals": 0}, seed=9)
    text = client.get(f"/matches/{match.pk}/export/jsonl/").content.decode()
    lines = [json.loads(line) for line in text.splitlines()]
    assert len(lines) >= 2
    for number, line in enumerate(lines, 1):
        logged = GameLogEntry.from_json(line).game
        played = logged.tricks[logged.tricks >= 0]
        sim = GameSim(rule=RuleSchieber())
        sim.init_from_cards(hands=_dealt_in_play_order(logged), dealer=logged.dealer)
        if logged.forehand == 0:
            sim.action_trump(10)  # push
        sim.action_trump(logged.trump)
        for card in played:
            sim.action_play_card(int(card))
        assert sim.state == logged, f"game {number}"
        last = number == len(lines)
        assert (logged.player == -1) == (not last or logged.nr_played_cards == 36)
    assert lines[-1]["game"]["currentPlayer"] != -1, "this match ended at the target, mid-game"
    resp = client.post("/import/jass/", {"log": SimpleUploadedFile("m.jsonl", text.encode())})
    imported = Match.objects.get(pk=int(resp.url.strip("/").split("/")[-1]))
    assert imported.result == match.result


def _dealt_in_play_order(logged) -> np.ndarray:
    """The hands as dealt of a kit ``GameState`` read from a log: the cards still held plus
    the cards each seat played (the trick's leader first, then counter-clockwise)."""
    hands = logged.hands.copy()
    for trick, first in zip(logged.tricks, logged.trick_first_player):
        seat = first
        for card in trick:
            if card >= 0:
                hands[seat, card] = 1
                seat = (seat + 3) % 4
    return hands
