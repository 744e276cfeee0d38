"""A correlation series against what a bound or range admits, by Fisher z: each seed's interval
(`of: every_seed`; a seed's miss counts only where it survives Holm's step-down across the seeds),
or the seeds pooled by random effects (`of: mean`)."""
from __future__ import annotations

import math
from dataclasses import replace

from harness.statistics.comparisons import bound_evidence
from harness.statistics.correlation_estimates import Correlation, PooledCorrelation, fisher_z
from harness.statistics.evidence import combine, holm_rejection_levels
from harness.statistics.outcome import FAIL, INCONCLUSIVE, PASS, Decision, fmt, level_text, most_needed
from harness.statistics.power import Power, fisher_power, inclusion_power, sensitivity
from harness.statistics.series import Series


def correlation_test(expectation, series: Series, fail_alpha: float) -> Decision:
    undefined = series.undefined
    if undefined:
        listed = "; ".join(f"s{seed}: {reason}" for seed, reason in undefined.items())
        return Decision(INCONCLUSIVE, f"{series.label}: the correlation is undefined ({listed})",
                        Power("seeds", len(series.values), None, None,
                              "no number of seeds decides an undefined correlation: what would is runs in which it "
                              "is defined (the reason says what is missing: clients, or quantities that vary "
                              "across clients beyond the control)"))
    alpha = expectation.alpha
    if expectation.every_seed:
        return _on_every_seed(expectation, series, fail_alpha)
    admitted = expectation.admitted()
    pooled = series.pooled
    if pooled is None:
        raise ValueError(f"{series.label}: no seed's correlation to pool")
    evidence = bound_evidence(admitted, alpha, series.label, pooled.z, pooled.se, pooled.df, fail_alpha, fisher_z,
                              seeds=pooled.seeds)
    status = combine(evidence)
    low, high = pooled.interval(1 - 2 * alpha)
    power = None
    if status == INCONCLUSIVE:
        power = _pooled_power(expectation, series, pooled)
    elif admitted.negated and status == PASS:
        power = sensitivity(_pooled_power(expectation, series, pooled))
    return Decision(status, f"{series.label}: pooled r = {fmt(pooled.r)}, {1 - 2 * alpha:.0%} interval "
                            f"[{fmt(low)}, {fmt(high)}] over {len(series.correlations)} seeds (random effects: "
                            f"{pooled.heterogeneity_text()}){level_text(fail_alpha, alpha)}", power, evidence)


def _on_every_seed(expectation, series: Series, fail_alpha: float) -> Decision:
    """Each seed's Fisher-z interval: PASS needs every seed to pass at α (intersection-union); a seed's
    miss counts only where it survives Holm's step-down across the seeds at `fail_alpha`."""
    admitted = expectation.admitted()
    per_seed = {seed: bound_evidence(admitted, expectation.alpha, f"{series.label} s{seed}", c.z, c.se, None,
                                     fail_alpha, fisher_z, seeds=1, source=series.label)
                for seed, c in series.correlations.items()}
    p_against = [min(e.p_against for e in comparisons) for comparisons in per_seed.values()]
    levels = dict(zip(per_seed, holm_rejection_levels(p_against, fail_alpha)))
    per_seed = {seed: [replace(e, fail_alpha=levels[seed]) for e in comparisons]
                for seed, comparisons in per_seed.items()}
    evidence = [e for comparisons in per_seed.values() for e in comparisons]
    by = {o: [seed for seed, comparisons in per_seed.items() if combine(comparisons) == o]
          for o in (PASS, FAIL, INCONCLUSIVE)}
    holm = (f"; a seed's miss is tested by Holm's step-down over the {len(per_seed)} seeds at α = {fail_alpha:.3g} "
            f"(" + ", ".join(f"s{seed} p = {p:.3g} against {levels[seed]:.3g}"
                             for seed, p in zip(per_seed, p_against)) + ")")
    head = (f"{series.label}: {len(by[PASS])} of {len(per_seed)} seeds' intervals meet it, "
            f"{len(by[FAIL])} miss it, {len(by[INCONCLUSIVE])} straddle it")
    if by[FAIL]:
        return Decision(FAIL, f"{head} (missing: {', '.join(f's{seed}' for seed in by[FAIL])}){holm}",
                        evidence=evidence)
    if by[INCONCLUSIVE]:
        powers = [_clients_power(expectation, series.correlations[seed],
                                 expectation.alpha if min(e.statistic for e in per_seed[seed]) >= 0 else levels[seed])
                  for seed in by[INCONCLUSIVE]]
        return Decision(INCONCLUSIVE, f"{head}{holm}", most_needed(powers), evidence)
    return Decision(PASS, head, evidence=evidence)


def _pooled_power(expectation, series: Series, pooled: PooledCorrelation) -> Power:
    """Seeds that would decide a pooled correlation, each seed as heavy as the observed ones on average
    (its sampling variance plus the between-seed variance)."""
    per_seed = list(series.correlations.values())
    variance = sum(1.0 / c.weight for c in per_seed) / len(per_seed) + pooled.tau_squared
    admitted = expectation.admitted()
    if admitted.one_sided:
        return fisher_power(pooled.z, admitted.bound, len(per_seed), variance, "seeds", expectation.alpha)
    return inclusion_power(pooled.z, math.sqrt(variance), fisher_z(admitted.low), fisher_z(admitted.high),
                           len(per_seed), expectation.alpha, t_based=False)


def _clients_power(expectation, c: Correlation, alpha: float) -> Power:
    """Clients per run that would decide one seed's correlation at `alpha` (each client adds 1 to z's
    weight)."""
    admitted = expectation.admitted()
    if admitted.one_sided:
        power = fisher_power(c.z, admitted.bound, int(c.weight), 1.0, "clients per run", alpha)
    else:
        power = inclusion_power(c.z, 1.0, fisher_z(admitted.low), fisher_z(admitted.high), int(c.weight), alpha,
                                "clients per run", t_based=False)
    offset = c.n - int(c.weight)
    return Power(power.unit, c.n, power.detectable, None if power.needed is None else power.needed + offset,
                 power.note)
