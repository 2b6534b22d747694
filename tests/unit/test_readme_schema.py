"""The README lists every constraint and index the stores create."""

import re
from pathlib import Path

from engine import cypher, sqlite_schema

README = (Path(__file__).parents[2] / "README.md").read_text()


def test_every_neo4j_constraint_and_index_is_in_the_readme() -> None:
    names = re.findall(r"CREATE (?:CONSTRAINT|INDEX) (\w+)", " ".join(cypher.schema()))

    assert len(names) == len(cypher.KEYS) + 2
    assert [name for name in names if f"`{name}`" not in README] == []


def test_every_sqlite_index_is_in_the_readme() -> None:
    names = re.findall(r"CREATE INDEX IF NOT EXISTS (\w+)", sqlite_schema.SCHEMA)

    assert names
    assert [name for name in names if f"`{name}`" not in README] == []
