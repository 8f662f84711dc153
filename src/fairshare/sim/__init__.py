"""Deterministic trace-driven simulation: the event engine and the run records it writes."""
