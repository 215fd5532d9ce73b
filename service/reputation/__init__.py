"""Reputation: the model, its constants and formula (model.py), and the events a finalized run emits (SPEC §7)."""
