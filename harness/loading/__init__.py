"""Loading and validating the claim and spec files, and the scale studies they declare."""
