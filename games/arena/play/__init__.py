"""The match core and its persistence: tables and seats, the runner that drives a game, the
event log and replays, the arena that seats bots and runs matches (:mod:`.arena`), control
messages, presence, analyses and the queries the pages and the API share."""
