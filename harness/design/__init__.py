"""Design-time decidability of one expectation: the seeds its PASS and FAIL need at a planning spread,
from its test and the design alone (the catalog-wide check is `harness.loading.design`)."""
