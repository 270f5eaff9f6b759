"""The bot doors: the TCP and WebSocket transports the games' endpoints use, HTTP bots, bot
keys, registered names, personal API tokens and the rate limits on all of them."""
