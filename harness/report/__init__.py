"""Render verdicts: REPORT.md with figures, a verdicts JSON, and a terminal table."""
