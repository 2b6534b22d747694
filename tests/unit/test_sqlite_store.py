"""SQLite-only behaviour: what the contract suite cannot express for both backends."""

from concurrent.futures import ThreadPoolExecutor

from engine.models import Scope
from engine.store import open_store
from tests.contract.builders import asserted, claim


def test_in_memory_store_is_shared_by_threads() -> None:
    store = open_store("sqlite:///:memory:")
    scope = Scope(org="o", patient="p")
    store.write(scope, asserted("fhir:Condition/c1", claim()))

    with ThreadPoolExecutor(max_workers=2) as pool:
        counts = list(pool.map(lambda _: len(store.list_facts(scope)), range(4)))

    assert counts == [1, 1, 1, 1]
    store.close()
