"""The runner builds a view nobody receives only when a resync asks for it
(``MatchRunner.latest_for``): what it answers then is what it would have published."""
from __future__ import annotations

import asyncio
import json

from games.arena import registry
from games.arena.play.runner import MatchRunner
from games.arena.play.seats import BuiltinSeat

CONFIG = {"players": 3, "dice": 2, "games": 2}


class NullWriter:
    async def append(self, rows):
        pass


class AnswersLater(BuiltinSeat):
    """A built-in bot whose answer comes a turn of the loop later, as a connected bot's does:
    meanwhile ``between()`` runs, as a resync would."""

    def __init__(self, name, policy, seed, between):
        super().__init__(name, policy, seed)
        self.between = between

    def ask(self, state, seat, version):
        answer = super().ask(state, seat, version)
        later = asyncio.get_running_loop().create_future()

        def settle():
            self.between()
            later.set_result(answer.result())

        asyncio.get_running_loop().call_soon(settle)
        return later


def bodies(messages) -> dict[int, dict]:
    """Public view bodies by version, without the time they were made."""
    out = {}
    for message in messages:
        body = json.loads(message["text"])
        body.pop("ts")
        out[body["version"]] = body
    return out


async def play(listening: bool):
    spec = registry.get("liars_dice")
    published, asked = [], []
    runner = None

    def resync():
        message = runner.latest_for("public")
        if message is not None:
            asked.append(message)

    async def publish(group, message):
        published.append(message)

    policy = spec.builtin_bots["random"][1]
    seats = [AnswersLater(f"bot{i}", policy, seed=i, between=resync) for i in range(CONFIG["players"])]
    runner = MatchRunner(1, spec, CONFIG, 11, seats, NullWriter(), publish, listening=lambda group: listening)
    await runner.run()
    return runner, published, asked


async def test_a_view_nobody_receives_is_built_for_a_resync_as_it_would_have_been_published():
    quiet, nothing, resyncs = await play(listening=False)
    watched, published, _ = await play(listening=True)
    assert nothing == [], "nobody listens: nothing is built or sent"
    assert quiet.version == watched.version and len(resyncs) > 50
    expected = bodies(published)
    for version, body in bodies(resyncs).items():
        assert body == expected[version]
        assert "hands" not in body["view"], "a live public view has no hand in play"
    assert quiet.latest_for(0) is None, "no person sits here"
