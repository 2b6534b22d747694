"""Offline memory extraction and memory–fact relationship inference (SPEC §3)."""
