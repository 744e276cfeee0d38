"""pydantic models of the claim and spec files."""
