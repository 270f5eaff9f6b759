"""Jass (Schieber): rules engine and the HSLU HTTP JSON codec (specs/jass-http.*)."""
