"""The statistical tests that decide an expectation on an observation, one module a job: the
comparisons of an estimate with what an expectation admits (`comparisons`), one series' values
(`values`), correlations (`correlations`), orders of variants (`orders`), equivalence and
differences within a seed spread (`equivalence`), ratios of seed spreads (`spreads`), and Holm's
correction across a family of claims (`families`). Each expectation class names the tests that
decide it (`harness.schema.claim.ExpectationBase.decide`); `harness.verdicts.verify` assembles the verdict."""
