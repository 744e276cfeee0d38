"""Federated-learning methods and the width-sliceable models they train."""
