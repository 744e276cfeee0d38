"""The FedProx paper for fedclaims: its claims (claims/) and experiments (specs/) beside the round
hook, kind and metric they need, all registered through entry points (see pyproject.toml)."""
