"""Tournaments: the plans of their formats and the statistics of their standings (no Django, no I/O)."""
