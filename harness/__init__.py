"""fedclaims harness: load claims and specs, plan and run experiments, verify, report."""
