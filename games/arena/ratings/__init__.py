"""Ratings (:mod:`.rating`, openskill), the leaderboards, and the bot and person pages that
show them."""
