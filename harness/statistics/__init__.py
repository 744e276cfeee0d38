"""Decisions on numbers, knowing nothing of claims, specs or records: the comparisons of an estimate with
what an expectation admits (`comparisons`, `bands`), one series' values (`values`), correlations
(`correlations`), orders of variants (`orders`), equivalence and differences within a seed spread
(`equivalence`), ratios of seed spreads (`spreads`), their statistics and power (`stats`, `evidence`,
`outcome`, `series`), trends along a scale axis (`trend`), and the group-sequential rule of seeds added
until decided (`sequential_boundary`, `sequential_rule`). Each expectation class names the tests that decide
it (`harness.schema.claim.ExpectationBase.decide`)."""
