"""docs/claims.md: the claim vocabulary and every kind's metrics, generated from the code."""
from __future__ import annotations

from harness.design import readings as design_rule
from harness.kinds import PROJECT, registered_kinds
from harness.schema.expectations import EXPECTATIONS
from harness.schema.observations import OBSERVATIONS
from harness.statistics import sequential_rule

FIELDS = {
    "statement": "the paper's exact words (or the authors' README's, see `quote_from`); a table row is quoted as "
                 "`Row | column value | ...`.",
    "source": "where the statement is: section, table, figure, or the README it is quoted from.",
    "experiment / observe / expect": "the spec that measures it, what to compute from its records, and one "
                                     "expectation per profile (below).",
    "note": "how the words were read (the tolerance and its reason), and for a FAIL whether it is a limit of the "
            "scale or a result that does not reproduce, with the numbers.",
    "role": "`paper` (default): the paper's claim. `diagnostic`: a second, labelled measurement that is not the "
            "paper's claim (another denominator such as cached features, this implementation's message layout); "
            "it needs a `note` naming what it measures instead and which claim is the paper's. Reports count "
            "diagnostics apart from the paper's claims. `probe`: the project's own test of a sentence the paper "
            "states but does not test itself (an attack the paper does not claim to resist); it needs a `note` "
            "saying so, and reports count it with the diagnostics, never as the paper's failed experiment. "
            "`implementation`: a check that the implementation follows the paper, whose outcome the code path "
            "fixes (no training or data decides it: a kind that trains nothing, or a structural metric or one "
            "that does not depend on learning, else the catalog refuses it); counted apart, never as a "
            "reproduction, and each has a test that breaks the implementation and sees it FAIL.",
    "attribution": "per profile, whose a FAIL there is, `{whose, evidence}` with `whose` one of `the paper` (its "
                   "own numbers or text disagree with the sentence: give the words in `quote` and where they are in "
                   "`quote_source`), `the paper's setting` (`as_run`: the id of the same claim run as the authors' "
                   "code ran it, which PASSes where this one FAILs), `the implementation` (a departure, named) or "
                   "`the scale` (the models learn too little here to tell). It is evidence the report's rule checks "
                   "(`harness.verdicts.attribution`), not its word: the rule derives whose every FAIL is (the scale "
                   "only below half the paper's gain over chance with no FAIL of the same relation where the models "
                   "learn, or with a study moving toward the claim; the implementation ruled out where conformance "
                   "fixtures cover every part of the claim's runs, the server's, the clients' training and their "
                   "augmentation), reports a `whose` it does not derive as contradicted, and "
                   "lists the FAILs it leaves unexplained at the end of the digest. An attribution at a profile the "
                   "claim does not test is refused.",
    "changed": "the claim's expectation's changes after seeds were run against it, oldest first, each "
               "`{date, commit, expect, seen, why}`: the expectation it replaced at each profile it changed, the "
               "commit whose claim file first holds the new one (`git log -S`) with its date, and per profile the "
               "seeds run there by then. A changed expectation is a new claim: it is tested only on seeds run "
               "after the change (a hypothesis written after its data was seen was chosen by that data, which no "
               "share of α corrects for, so the α is not split with the old one); where none is, the verdict is "
               "INCONCLUSIVE, and seeds added until decided plan its looks on the seeds run after the change "
               "(the sequential file records the change). The report shows the replaced expectation's verdict "
               "on the seeds it was written for beside the new one, with the date and commit; `validate` lists "
               "the changes, and warns of a claim whose recorded sequential looks test another expectation than "
               "it states with no `changed:` entry saying so. tests/test_changed_expectations.py checks each "
               "entry against git history.",
    "quote_from": "`paper` (default) or `authors-readme`: the statement quotes the authors' repository README, "
                  "not the paper; the `source` must name that README.",
    "paper_bound": "the paper's own bound, in its figures (at most 50 characters), where every expectation the "
                   "claim states (its `paper:` one included) tests a weaker one: '> 0' for 'collapses'. The digest "
                   "then reads each PASS of the claim as against the weaker bound ('PASS (> 0; the paper's …: not "
                   "tested)'), never as a reproduction; a PASS whose profile's expectation differs from the `paper:` "
                   "one, or whose number is a proxy, reads so too.",
    "as_run_of": "the id of a claim of the same file that this one tests in the setting the authors' public code "
                 "ran (its variants carry that setting, sourced in the spec): the same observation and hypotheses, "
                 "each variant replaced by one that differs from it by one and the same setting. Where the stated "
                 "claim FAILs at a profile and this one's last word there (a confirmatory test's where one was "
                 "read) is PASS, the rule attributes the FAIL to the paper's setting; a link that is not such a test "
                 "is not read (`harness.report.attributions.as_run_problem`). `validate` refuses one naming no claim "
                 "of its file, itself, or a claim that is itself `as_run_of` another.",
    "repeats": "the id of a claim of the same file whose observation (experiment, metric, arguments, variants) and "
               "test this one repeats: another sentence of the paper read as the same relation. It adds no "
               "independent evidence, so its verdicts are shown but counted once, under the claim it repeats "
               "(evidence group `repeat`); `validate` refuses one whose observation differs.",
    "central (a field of the claim file, beside `paper` and `title`)": "the ids of the claims the paper's abstract "
                  "and conclusion make: REPORT.md's digest opens with them, at most 90 lines for every paper "
                  "together.",
    "unchecked (a field of the claim file)": "the paper's assertions that no claim encodes, each as `{statement, "
                  "source, reason}`: the reason it cannot be checked in this project (a data set or model it does "
                  "not have, a comparison across experiments, a curve shape no metric reads). Each paper's report "
                  "page lists them, so that a reader sees what was not checked as well as what was.",
}

ENCODING_RULES = [
    "**The paper's words, not stricter orders.** An expectation asserts exactly the relation the sentence states. "
    "'HAS-FL is the weakest of the three' is HAS-FL below each of the others, not a full ranking of all three; a "
    "qualitative reading of a figure ('low-capacity clients sit at their caps') is a statement about the typical "
    "client, not about every client on every seed.",
    "**Rounding-aware bounds.** A number the paper prints stands for every value that rounds to it: '0.69' covers "
    "[0.685, 0.695), '6–7%' covers [5.5%, 7.5%), 'r between −0.72 and −0.84' covers [−0.845, −0.715] (a "
    "`between` is inclusive at both ends). Bounds are never narrower than the paper's rounding. A hedged number "
    "('about', 'roughly', 'approximately', '~') gets a wider tolerance: ±10% of the value for ratios, fractions, "
    "counts and losses, ±1 point for an accuracy in percent; 'an order of magnitude' is a ratio whose log10 rounds to "
    "1, [10^0.5, 10^1.5]. A mean ± std from a table is tested with the std as tolerance. A tolerance wider than these "
    "needs a reason that is not the outcome, stated in the note: the quantity depends on random draws the paper does "
    "not report (the capacity caps behind an average capacity), or on details the paper leaves out and the project "
    "reconstructs (a message layout).",
    "**The paper's quantities, not constructed comparators.** A claim compares what the paper compares: its "
    "baselines as the paper or the authors' code define them, its ratios rather than a weaker ordering. A "
    "comparator neither the paper nor the authors' code has is not a claim.",
    "**Diagnostics are labelled and counted apart.** A measurement that is not the paper's claim but explains one "
    "(the cached-features form of a pipeline timing, this implementation's message layout) stays, with "
    "`role: diagnostic`.",
    "**Quotes from the authors' README are labelled** with `quote_from: authors-readme`; they are the authors' "
    "numbers, not the paper's.",
    "**Per profile, the paper's relation at that scale, chosen before any run.** `paper` tests the paper's numbers; "
    "`smoke` and `standard` test the relation the paper states wherever it does not depend on the accuracy level "
    "or the length of training the profile shrinks, and `skip: <reason>` where the scale cannot say it. "
    "Expectations are committed before the runs that test them; a claim that does not reproduce is a result.",
    "**Empirical or analytic.** A claim's evidence is its experiment kind's (`Catalog.evidence(claim_id)`): "
    "*empirical* kinds train models or time real pipelines, *analytic* kinds compute a rule, a count or a "
    "coverage without training (their records are shared by every profile that resolves to the same config). "
    "Each kind below states its evidence.",
]

RULES = [
    "A test of the mean over seeds needs a spread: one seed of a metric that varies with the seed is INCONCLUSIVE "
    "(checked before anything else, so one infinite seed decides nothing). Metrics marked *deterministic* are fixed "
    "by the run's config and are compared directly; so are seeds that all agree. Seeds of a deterministic metric "
    "that disagree (beyond the metric's declared agreement) make the claim an ERROR naming the metric.",
    "**Several variants** (`of: [A, B, ...]`): each must meet the expectation. PASS needs every variant to pass at α "
    "(an intersection-union test, which needs no correction); a contradiction is tested with Holm's correction over "
    "the variants (for 'any variant contradicts it', its first step: α / number of variants), so a claim that "
    "holds keeps a false-FAIL rate of α however many variants it names.",
    "**Families**: claims of one file naming the same `family` test one relation several ways (e.g. three "
    "weightings, each 'not better'). Their rejections are corrected together by Holm's step-down across the "
    "family, per profile: each claim's deciding p-value is tested at Holm's level for its rank, and a claim whose "
    "rejection does not survive is decided again at that level (its reason says so). A claim the family leaves "
    "INCONCLUSIVE carries the seeds that would decide it at that level (at its rank's level α / (m − rank) where "
    "the step-down stopped before it), computed from its comparisons: their statistics, standard errors and seeds. "
    "A family names at least two claims.",
    "**Not measurable at this scale**: a claim of a strict difference between variants (an `order`, or `above` / "
    "`below` on a paired `difference`, on a ratio of seed spreads or on each of several variants) whose metric is "
    "not declared deterministic and takes one value on every seed (at least 2) of every compared variant (for a "
    "`difference`: 0 on every seed, the variants agreeing exactly) is SKIPPED with a reason beginning 'not "
    "measurable at this scale:' that names the value: a quantity that varies neither with the seed nor between "
    "the variants measures nothing there (a decline of 0 against 0 after 30 rounds is not a result). Ranges, "
    "equalities, equivalence and 'not above / not below' claim no difference, which such a quantity can meet: they "
    "are decided as usual, as are deterministic metrics.",
    "**`of: every_seed`** of a metric that varies with the seed is a **sign count**: a seed on the wrong side of "
    "the bound is a FAIL; all n seeds on the claimed side are a PASS only if a one-sided exact sign test rejects "
    "at α, p = 0.5^n (5 seeds at α = 0.05), and otherwise INCONCLUSIVE with that p and the seeds that would decide "
    "it (the smallest n with 0.5^n ≤ α). What a PASS shows is that every seed run was on the claimed side and that "
    "the median seed lies there (the sign test's hypothesis), not that every seed one could run would be: where "
    "a fifth of all seeds fall on the wrong side, 5 seeds PASS with chance 0.8^5 = 0.33, and where half do, "
    "0.5^5 = 0.031. A range (`between`, `approx`, `equals` with a tolerance) is two such "
    "counts, one per bound, which all n seeds inside pass together; an `order` is one count per adjacent pair; "
    "'not above / not below' fails only when the seeds beyond the bound are significantly many (sign test at α). "
    "Deterministic metrics, metrics fixed by the protocol's structure or exact algebra (declared `structural`), "
    "seeds that all agree and exact values (`equals` without a tolerance, an invariant that only values tied with "
    "it meet) are read seed by seed directly.",
    "Correlations are decided on Fisher's z at the expectation's α: a bound by a one-sided test (the (1 − α) "
    "one-sided interval), a range by the (1 − 2α) interval. `of: every_seed` decides each seed's r; `of: mean` "
    "pools the seeds by **random effects**: seeds are separate runs whose correlations may differ by more than "
    "sampling error, so the between-seed variance τ² is estimated (DerSimonian-Laird) and the mean's interval uses "
    "the Hartung-Knapp variance on k − 1 degrees of freedom (never narrower than the fixed-effect one); Cochran's Q "
    "and I² appear in the reason. Each seed's z enters the pool with its bias removed: atanh(r) over n clients "
    "lies about ρ/(2(n − 1)) beyond atanh(ρ) (−0.022 at ρ = −0.8 over 20 clients), the same on every seed, so "
    "uncorrected it would outgrow the pooled standard error as seeds are added (a true ρ on a range's edge was "
    "falsely FAILed 0.090 of the time at 20 seeds and 0.140 at 40, at α = 0.05); the pool corrects each seed's z "
    "by Hotelling's expansion of that bias to the third order in 1/(n − 1), inverted at the observed z (a "
    "Spearman correlation, whose z is biased otherwise, is pooled as it is). "
    "With `of: every_seed` a PASS needs every seed's interval to pass at α (an "
    "intersection-union test, no correction), and a seed's miss counts only where it survives Holm's step-down "
    "across the seeds (at α / variants), so one seed of five at p = 0.04 is not a FAIL; the reason lists each "
    "seed's p against its Holm level. A partial correlation whose quantity is a linear function of the control is "
    "undefined (INCONCLUSIVE, with the reason).",
    "Infinite values: an `order` pair with an infinite difference on some seed is decided by the signs (an exact "
    "one-sided sign test: five seeds all on one side decide it at α = 0.05); an infinite paired difference is "
    "never equivalent (FAIL).",
    "Every INCONCLUSIVE names the smallest effect the data could detect (power 80%) and the seeds (or clients per "
    "run, for a per-seed correlation) that would decide it at the observed effect and spread, for the test that "
    "decides it: a bound by a one-sided t (or z) test, a range, `approx` or an equivalence by two one-sided tests "
    "that must both pass (their joint power), a reversal of an order at its own level α / pairs. A PASS of a "
    "'not above', 'within spread' or equivalence claim states what the test could have detected, never seeds "
    "'that would decide it'. An INCONCLUSIVE that no number of seeds decides (a value that is not a number, an "
    "undefined correlation, a mean of +inf and −inf) says so and what would decide it instead. `fedclaims power` "
    "lists them.",
    "Every verdict records the comparisons it rests on (each test statistic with its critical values) and its "
    "margin to every other verdict in standard errors; REPORT.md prints it with the deciding p-value.",
    "Validation rejects expectations that cannot fail or cannot pass: non-finite numbers, a difference of a variant "
    "with itself, repeated variants, correlation bounds every r meets, `equals` without a tolerance on the mean of "
    "a metric that varies with the seed.",
    sequential_rule.TEXT,
]


def render() -> str:
    lines = ["# Claim vocabulary", "",
             "Generated by `fedclaims vocabulary` from the code; a test keeps it current.", "",
             "## Claim fields", ""]
    lines += [f"- **{key}**: {text}" for key, text in FIELDS.items()]
    lines += ["", "## How a paper's sentence becomes a claim", ""]
    lines += [f"- {rule}" for rule in ENCODING_RULES]
    lines += ["", "## Observations", ""]
    lines += [f"- **{key}**: {model.doc}" for key, model in OBSERVATIONS.items()]
    lines += ["", "## Expectations (one per profile)", ""]
    lines += [f"- **{key}**: {model.doc}" for key, model in EXPECTATIONS.items()]
    lines += ["", "## How verdicts are decided", ""]
    lines += [f"- {rule}" for rule in RULES]
    lines += ["", "## Decidable by design", ""]
    lines += [f"- {rule}" for rule in design_rule.RULES]
    lines += ["", "## Experiment kinds", ""]
    for name, kind in registered_kinds(PROJECT).items():
        learning = (f" Learning level read by `{kind.learning.metric}` of each variant a claim reads against the "
                    "paper's accuracy for it (its `paper:`, else the spec's `reference`), the lowest counting, chance "
                    f"from each record's `{kind.learning.majority}` (`harness.verdicts.levels`)." if kind.learning
                    else "")
        lines += [f"### `{name}`", "", kind.description, "",
                  f"Runner: `{kind.runner}`. Evidence: {kind.evidence}.{learning}", "", "Metrics:", ""]
        for metric, spec in kind.metrics.items():
            args = ", ".join(spec.args.model_fields) if spec.args.model_fields else ""
            varies = " *Varies between runs; the baseline compares verdicts only.*" if spec.varies else ""
            fixed = (" *Deterministic.*" if spec.deterministic is True else
                     " *Deterministic for some configs.*" if callable(spec.deterministic) else "")
            counted = (" *Structural: counted with the analytic checks.*" if spec.structural else
                       " *A measured cost: no learning level.*" if not spec.learned and kind.learning else "")
            smallest = (f" *Smallest effect of interest: {spec.smallest_effect:g}.*"
                        if spec.smallest_effect is not None else "")
            lines.append(f"- `{metric}`" + (f" (args: {args})" if args else "")
                         + f": {spec.description}{fixed}{varies}{counted}{smallest}")
        if kind.client_quantities:
            lines += ["", "Per-client quantities:", ""]
            lines += [f"- `{q}`: {spec.description}" for q, spec in kind.client_quantities.items()]
        if kind.plots:
            lines += ["", "Plots: " + ", ".join(f"`{p}`" for p in kind.plots) + "."]
        lines.append("")
    return "\n".join(lines)
