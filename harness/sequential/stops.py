"""Why a claim's sequential looks ended: the reasons the driver gives and the sequential file records."""
from __future__ import annotations

DECIDED = "decided"
NOT_EXTENDED = "decided at fixed n: not extended"
"""A fixed-n PASS or FAIL that look 1 did not decide; with look 1 the profile's own verdict, only a family
read differently at the two could give it."""
NO_FIGURE = "no finite figure of the seeds that would decide it"
AT_LIMIT = "max seeds reached"
BUDGET = "budget spent"
NOT_TESTED = "not tested"
INTERRUPTED = "interrupted before its looks ended"
STOPS = (DECIDED, NOT_EXTENDED, NO_FIGURE, AT_LIMIT, BUDGET, NOT_TESTED, INTERRUPTED)
CONTINUING = (BUDGET, NOT_TESTED, INTERRUPTED)
"""Why looks ended that a later invocation goes on from."""
