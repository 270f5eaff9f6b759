"""Tournaments, the pure layer: the plans of the formats and the standings' statistics."""
