"""A person without a browser: the same HTTP forms and WebSocket a browser uses, driven
from Python (cookies, CSRF token, session-bound guest nickname)."""
from __future__ import annotations

import http.cookiejar
import json
import re
import urllib.parse
import urllib.request

import websockets


class Guest:
    """A guest session on ``base_url`` (``http://127.0.0.1:PORT``)."""

    def __init__(self, base_url: str, nickname: str):
        self.base = base_url
        self.nickname = nickname
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def get(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=10) as resp:
            return resp.read().decode()

    def get_json(self, path: str):
        return json.loads(self.get(path))

    def post_form(self, path: str, fields: dict) -> str:
        """GET the page for its CSRF token, POST ``fields``; returns the final URL."""
        page = self.get(path)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        data = urllib.parse.urlencode({"csrfmiddlewaretoken": token, **fields}).encode()
        req = urllib.request.Request(self.base + path, data=data, headers={"Referer": self.base + path})
        with self.opener.open(req, timeout=10) as resp:
            return resp.geturl()

    def create_table(self, game: str, config: dict, seats: list[str]) -> int:
        """Create a table through the form; returns the match id."""
        fields = {"nickname": self.nickname, **{k: str(v) for k, v in config.items()}}
        fields.update({f"seat{i}": choice for i, choice in enumerate(seats)})
        url = self.post_form(f"/tables/new/{game}/", fields)
        return int(re.search(r"/matches/(\d+)/", url).group(1))

    def join(self, match_id: int, index: int) -> None:
        """Take open person-seat ``index`` with this guest's nickname."""
        page = self.get(f"/matches/{match_id}/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        data = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "nickname": self.nickname}).encode()
        req = urllib.request.Request(f"{self.base}/matches/{match_id}/join/{index}/", data=data,
                                     headers={"Referer": f"{self.base}/matches/{match_id}/"})
        self.opener.open(req, timeout=10).read()

    def websocket(self, match_id: int):
        """An open WebSocket to the match (use with ``async with``)."""
        cookies = "; ".join(f"{c.name}={c.value}" for c in self.jar)
        ws_url = self.base.replace("http://", "ws://") + f"/ws/matches/{match_id}/"
        return websockets.connect(ws_url, additional_headers={"Cookie": cookies, "Origin": self.base},
                                  max_size=2**22)
