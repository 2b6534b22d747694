"""Fixtures of the unit tests: the fake chat endpoint (tests/unit/fake_llm.py)."""

from tests.unit.fake_llm import fake, llm, waits

__all__ = ["fake", "llm", "waits"]
