"""Runners: one module per experiment kind, turning a resolved config and a seed into a record.

A runner imports only what computes its result (methods, datasets), because the
source of that import closure is hashed into the key of every record it makes.
"""
