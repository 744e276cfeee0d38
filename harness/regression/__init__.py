"""Regression checks: verdicts and numbers against a baseline, a git revision or another machine's numerics."""
