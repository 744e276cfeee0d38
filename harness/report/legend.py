"""The verdicts' names as REPORT.md shows them, and its legends (in full and on the first screen)."""
from __future__ import annotations

ICONS = {"PASS": "✅ PASS", "FAIL": "❌ FAIL", "INCONCLUSIVE": "❔ INCONCLUSIVE", "SKIPPED": "⏭ SKIPPED",
         "ERROR": "⚠️ ERROR"}
LEGEND = ["Verdicts:",
          "- **PASS**: the observation meets the paper's statement as encoded, by the test the expectation names.",
          "- **FAIL**: it does not (the claim did not reproduce at this scale: the numbers are the result).",
          "- **INCONCLUSIVE**: the data cannot decide (an interval straddles the bound, or one seed of a quantity that "
          "varies with the seed); the reason gives the smallest effect the data could detect and the seeds (or "
          "clients) that would decide it.",
          "- **SKIPPED**: no expectation at this profile, its data set unavailable here, the profile not run, or not "
          "measurable at this scale (every compared value one constant); the reason says which.",
          "- **ERROR**: a run or the observation failed.",
          "- *weak* qualifies a verdict where the models barely learn (below half the paper's gain over chance).",
          "- Tests on a profile's seeds run at 0.7 α (0.035 for a claim's α = 0.05): the first look of the plan "
          "`--until-decided` continues, whose added seeds spend the rest, so that the two together keep α."]
SHORT_LEGEND = ("Verdicts: **PASS** meets the paper's statement as encoded; **FAIL** does not at this scale; "
                "**INCONCLUSIVE** the data cannot decide; **SKIPPED** not tested here (the reason says why); "
                "**ERROR** a run failed; *weak*: the models barely learn. In full: [Findings](#findings).")
