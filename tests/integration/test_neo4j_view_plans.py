"""The view statement seeks in key indexes: no part of it scans a label across patients."""

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from neo4j import GraphDatabase

from engine import cypher_view
from engine.models import FactKind
from engine.settings import get_settings
from engine.store import GraphStore

pytestmark = pytest.mark.neo4j
SCANS = {"AllNodesScan", "NodeByLabelScan", "NodeIndexScan", "NodeUniqueIndexScan"}


def _operators(plan: dict[str, Any]) -> Iterator[tuple[str, str]]:
    yield plan["operatorType"].split("@")[0], str(plan.get("args", {}).get("Details", ""))
    for child in plan.get("children", []):
        yield from _operators(child)


@pytest.mark.parametrize("parts", list(itertools.product([False, True], repeat=4)), ids=str)
def test_every_part_of_a_view_seeks_in_the_patients_key_index(
    neo4j_store: GraphStore, neo4j_uri: str, parts: tuple[bool, bool, bool, bool]
) -> None:
    password = get_settings().neo4j_password.get_secret_value()
    auth = (get_settings().neo4j_user, password) if password else None
    statement = cypher_view.view(*parts)
    params = {"org": "o", "patient": "p", "kinds": [k.value for k in FactKind]}
    with (
        GraphDatabase.driver(
            neo4j_uri, auth=auth, notifications_disabled_classifications=["UNRECOGNIZED"]
        ) as driver,
        driver.session(database=get_settings().neo4j_database) as session,
    ):
        plan = session.run(f"EXPLAIN {statement}", params).consume().plan
    assert plan is not None
    operators = list(_operators(plan))

    assert not [op for op in operators if op[0] in SCANS]
    seeks = [details for op, details in operators if op == "NodeUniqueIndexSeek"]
    assert len(seeks) == 1 + sum(parts)
    assert all("org = $org AND patient = $patient" in details for details in seeks)
