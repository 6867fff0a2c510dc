"""Hydra entry points: ``run`` (one job per config), ``bench`` (speed against the peers)."""
