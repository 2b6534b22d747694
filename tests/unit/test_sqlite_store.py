"""SQLite-only behaviour: what the contract suite cannot express for both backends."""

from concurrent.futures import ThreadPoolExecutor

from engine.models import FactKind, Scope
from engine.sqlite_schema import SELECT_KINDS
from engine.store import ViewRequest, open_store
from tests.contract.builders import asserted, claim


def test_in_memory_store_is_shared_by_threads() -> None:
    store = open_store("sqlite:///:memory:")
    scope = Scope(org="o", patient="p")
    store.write(scope, asserted("fhir:Condition/c1", claim()))

    with ThreadPoolExecutor(max_workers=2) as pool:
        counts = list(pool.map(lambda _: len(store.list_facts(scope)), range(4)))

    assert counts == [1, 1, 1, 1]
    store.close()


def test_a_new_in_memory_store_is_empty_while_a_dropped_ones_connection_lives() -> None:
    scope = Scope(org="o", patient="p")
    dropped = open_store("sqlite:///:memory:")
    dropped.write(scope, asserted("fhir:Condition/c1", claim()))
    alive = dropped._db()  # type: ignore[attr-defined]  # held, as a reference cycle may
    del dropped

    stores = [open_store("sqlite:///:memory:") for _ in range(50)]  # one may reuse its id()

    assert all(store.list_facts(scope) == [] for store in stores)
    for store in stores:
        store.close()
    alive.close()


def test_facts_query_starts_from_the_patients_facts_and_needs_no_sort() -> None:
    store = open_store("sqlite:///:memory:")
    db = store._db()  # type: ignore[attr-defined]
    plan = [row[3] for row in db.execute("EXPLAIN QUERY PLAN " + SELECT_KINDS, ("o", "p", "[]"))]
    searches = [step.split(" USING ")[0] for step in plan if step.startswith("SEARCH")]

    assert searches == ["SEARCH f", "SEARCH a", "SEARCH s"]
    assert "(org=? AND patient=?)" in plan[0]
    assert not [step for step in plan if "TEMP B-TREE" in step]
    store.close()


def test_one_view_reads_its_kinds_in_one_facts_query() -> None:
    store = open_store("sqlite:///:memory:")
    scope = Scope(org="o", patient="p")
    store.write(scope, asserted("fhir:Condition/c1", claim()))
    statements: list[str] = []
    store._db().set_trace_callback(statements.append)  # type: ignore[attr-defined]

    store.read_view(scope, ViewRequest(kinds=frozenset(FactKind)))

    assert sum("FROM facts f" in s for s in statements) == 1
    store.close()
