"""From records to verdicts: each claim's observation read from its runs' records (`observe`), decided by
the tests its expectation names (`harness.statistics`) into a Verdict (`verify`), Holm's correction across a
family of claims (`families`), each verdict's evidence level (`levels`), and re-verification from an
earlier report's observations (`archive`)."""
