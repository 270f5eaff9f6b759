"""Headline figures: each benchmark prints its own report for people, and with :func:`figure`
one machine-readable line per figure that ``benchmarks/run_all.py`` collects into one table.

A line is ``FIGURE {"name", "value", "unit", "target", "better", "load"}`` (JSON after the
word): ``target`` is the bound the figure must meet (None: reported only), ``better`` says
which side of it is good ("lower" or "higher"), ``load`` the 1-minute load average when the
figure was taken (a figure on a busy machine reads differently).
"""
from __future__ import annotations

import json
import os

PREFIX = "FIGURE "


def figure(name: str, value: float, unit: str, target: float | None = None, better: str = "lower") -> None:
    """Print one figure line (see the module docstring).  ``better`` is "lower" or
    "higher"; raises ``ValueError`` for anything else."""
    if better not in ("lower", "higher"):
        raise ValueError("better is 'lower' or 'higher'")
    print(PREFIX + json.dumps({"name": name, "value": value, "unit": unit, "target": target, "better": better,
                               "load": round(os.getloadavg()[0], 2)}), flush=True)


def parse(line: str) -> dict | None:
    """The figure a printed line carries, or None for any other line."""
    if not line.startswith(PREFIX):
        return None
    try:
        data = json.loads(line[len(PREFIX):])
    except ValueError:
        return None
    return data if isinstance(data, dict) and {"name", "value", "unit"} <= set(data) else None


def met(data: dict) -> bool | None:
    """Whether a parsed figure meets its target (None without one)."""
    target = data.get("target")
    if target is None:
        return None
    return data["value"] < target if data.get("better", "lower") == "lower" else data["value"] >= target
