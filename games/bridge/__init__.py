"""Contract bridge: the rules (rules.py) and scoring (scoring.py) layers (issue 24)."""
