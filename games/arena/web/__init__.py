"""The web for people: the pages, the browsers' WebSocket consumers, the JSON API, match
files' import and export, and accounts."""
