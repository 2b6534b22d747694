"""Every Cypher statement of the Neo4j adapter, as constants and builders.

Values always travel as `$parameters`, lists of rows as `UNWIND $rows AS row`. Labels and
relationship types cannot be parameters, so they are formatted into statements here from
enum members only, never from input. Every statement is confined to `$org` and `$patient`
(`LOCK_PATIENTS`, to `$org` and the patients of `$patients`).

A lookup by part of a node key (`org`, `patient`) adds `IS NOT NULL` for the remaining key
properties: that is what lets the planner seek in the composite index that backs the
uniqueness constraint instead of scanning the label.
"""

from enum import StrEnum

from engine.models import FactLinkType, RelationshipType


class Label(StrEnum):
    PATIENT = "Patient"
    FACT = "Fact"
    SOURCE = "Source"
    SESSION = "Session"
    MESSAGE = "Message"
    MEMORY = "Memory"
    REVIEW = "MemoryReview"
    AUDIT = "AuditEvent"


class Rel(StrEnum):
    ASSERTED_BY = "ASSERTED_BY"
    PART_OF = "PART_OF"
    FROM = "FROM"
    REVIEWS = "REVIEWS"


KEYS: dict[Label, tuple[str, ...]] = {
    Label.PATIENT: ("org", "patient"),
    Label.FACT: ("org", "patient", "fact_key"),
    Label.SOURCE: ("org", "patient", "source_ref"),
    Label.SESSION: ("org", "patient", "session_id"),
    Label.MESSAGE: ("org", "patient", "session_id", "seq"),
    Label.MEMORY: ("org", "patient", "memory_id"),
    Label.REVIEW: ("org", "patient", "review_id"),
    Label.AUDIT: ("org", "event_id"),
}

# Erasure and counting go leaves first, the patient last: an interrupted erasure leaves the
# patient listed, so that it is visibly unfinished and a rerun completes it.
ERASE_ORDER = (
    Label.REVIEW,
    Label.MESSAGE,
    Label.MEMORY,
    Label.SESSION,
    Label.SOURCE,
    Label.FACT,
    Label.PATIENT,
)

MEMORY_RELS = "|".join(t.name for t in RelationshipType)
LINK_RELS = "|".join(t.name for t in FactLinkType)
# Writing a property takes the node's write lock, which Neo4j holds until the transaction
# ends; removing it again in the same statement leaves nothing behind.
LOCK = "SET {0}._LOCK_ = true REMOVE {0}._LOCK_"


def constraints() -> list[str]:
    """One idempotent uniqueness constraint per node key (all Community Edition allows)."""
    return [
        f"CREATE CONSTRAINT {label.lower()}_key IF NOT EXISTS FOR (n:{label})"
        f" REQUIRE ({', '.join(f'n.{p}' for p in props)}) IS UNIQUE"
        for label, props in KEYS.items()
    ]


def schema() -> list[str]:
    """The constraints, then the indexes that audit queries seek in."""
    return [
        *constraints(),
        f"CREATE INDEX audit_patient IF NOT EXISTS FOR (e:{Label.AUDIT}) ON (e.org, e.patient)",
        f"CREATE INDEX audit_time IF NOT EXISTS FOR (e:{Label.AUDIT}) ON (e.org, e.time)",
    ]


def node(var: str, label: Label, **keys: str) -> str:
    """The pattern of one node of the patient by its key: `(var:Label {org: $org,
    patient: $patient, key: expr...})`, the keys' values Cypher expressions."""
    props = ", ".join(
        f"{k}: {v}" for k, v in {"org": "$org", "patient": "$patient", **keys}.items()
    )
    return f"({var}:{label} {{{props}}})"


def scan(var: str, label: Label) -> str:
    """`MATCH` every node of the label in scope, through its key index (extend the
    `WHERE` with `AND ...`)."""
    rest = " ".join(f"AND {var}.{p} IS NOT NULL" for p in KEYS[label][2:])
    return f"MATCH ({var}:{label}) WHERE {var}.org = $org AND {var}.patient = $patient {rest}"


_ORPHAN = (
    f"NOT EXISTS {{ (f)-[:{Rel.ASSERTED_BY}]->(:{Label.SOURCE}) }}"
    f" AND NOT EXISTS {{ (:{Label.MEMORY})-[:{MEMORY_RELS}]->(f) }}"
)

# patients

# Patients of `$org` locked in the order of `$patients`, rows of `{patient, upsert, data}`:
# a patient is created (its data `$empty`) only if `upsert`, else locked only if it exists,
# and its data replaced by the row's unless that is null.
LOCK_PATIENTS = (
    "UNWIND $patients AS row WITH row WHERE row.upsert"
    f" OR EXISTS {{ (:{Label.PATIENT} {{org: $org, patient: row.patient}}) }}"
    f" MERGE (p:{Label.PATIENT} {{org: $org, patient: row.patient}}) ON CREATE SET p.data = $empty"
    f" SET p.data = coalesce(row.data, p.data) {LOCK.format('p')}"
)
GET_PATIENT = f"MATCH {node('p', Label.PATIENT)} RETURN p.data AS data"
SET_MEMORY_PAUSED = (
    f"MATCH {node('p', Label.PATIENT)} SET p.memory_paused = $paused RETURN count(p) AS found"
)
MEMORY_PAUSED = (
    f"MATCH {node('p', Label.PATIENT)} RETURN coalesce(p.memory_paused, false) AS paused"
)
LIST_PATIENTS = (
    f"MATCH (p:{Label.PATIENT}) WHERE p.org = $org AND p.patient IS NOT NULL"
    " RETURN p.patient AS patient"
)

# sources and facts

# A batch's writes read what they need in one statement, BATCH_STATE, and write in two,
# WRITE_SOURCES and WRITE_LINKS; each part of a statement is a `CALL () { }` subquery, run in
# order, and sees what the earlier parts wrote. `$refs` holds every ref a source may take:
# its own and the one it is kept apart under (`engine.resolution.apart_ref`). WRITE_SOURCES
# deletes every assertion of the stored sources it replaces (`$refs`) before it creates the
# claims' assertions, so each is created, never merged. The patient's lock keeps the state
# read current, so the sources and facts that it lacks are created, not merged (a merge
# costs the server about twice as much); the key constraints refuse any duplicate.
BATCH_STATE = (
    f"CALL () {{ {scan('f', Label.FACT)} RETURN collect({{key: f.fact_key,"
    f" asserted: [(f)-[a:{Rel.ASSERTED_BY}]->(s:{Label.SOURCE}) | [s.source_ref, a.claim]],"
    f" related: EXISTS {{ (:{Label.MEMORY})-[:{MEMORY_RELS}]->(f) }}}}) AS facts }}"
    f" CALL () {{ UNWIND $refs AS ref MATCH {node('s', Label.SOURCE, source_ref='ref')}"
    " RETURN collect({ref: ref, data: s.data}) AS sources }"
    " RETURN facts, sources"
)
_SOURCE_PROPERTIES = (
    "s.content_hash = row.content_hash, s.last_updated = row.last_updated, s.data = row.data"
)
WRITE_SOURCES = (
    "CALL () { UNWIND $new_sources AS row"
    f" CREATE {node('s', Label.SOURCE, source_ref='row.source_ref')} SET {_SOURCE_PROPERTIES} }}"
    " CALL () { UNWIND $stored_sources AS row"
    f" MATCH {node('s', Label.SOURCE, source_ref='row.source_ref')} SET {_SOURCE_PROPERTIES} }}"
    f" CALL () {{ UNWIND $refs AS ref MATCH {node('s', Label.SOURCE, source_ref='ref')}"
    f"<-[a:{Rel.ASSERTED_BY}]-(:{Label.FACT}) DELETE a }}"
    f" CALL () {{ UNWIND $removed AS key MATCH {node('f', Label.FACT, fact_key='key')}"
    f" WHERE {_ORPHAN} DETACH DELETE f }}"
    " CALL () { UNWIND $new_facts AS row"
    f" CREATE {node('f', Label.FACT, fact_key='row.fact_key')} SET f.kind = row.kind }}"
    " CALL () { UNWIND $claims AS row"
    f" MATCH {node('s', Label.SOURCE, source_ref='row.source_ref')}"
    f" MATCH {node('f', Label.FACT, fact_key='row.fact_key')}"
    f" CREATE (f)-[:{Rel.ASSERTED_BY} {{claim: row.claim}}]->(s) }}"
)
# Retiring the sources a newer document version dropped: their facts go when no other
# source asserts them and no memory bears on them.
RETIRE_SOURCES = (
    f"UNWIND $refs AS ref MATCH {node('s', Label.SOURCE, source_ref='ref')}"
    f" OPTIONAL MATCH (f:{Label.FACT})-[:{Rel.ASSERTED_BY}]->(s)"
    " WITH s, collect(f.fact_key) AS keys DETACH DELETE s RETURN keys"
)
DROP_ORPHANS = (
    f"UNWIND $keys AS key MATCH {node('f', Label.FACT, fact_key='key')}"
    f" WHERE {_ORPHAN} DETACH DELETE f"
)
ASSERTED_CLAIMS = (
    f"{scan('f', Label.FACT)} OPTIONAL MATCH (f)-[a:{Rel.ASSERTED_BY}]->(s:{Label.SOURCE})"
    " RETURN f.fact_key AS key, s.source_ref AS ref, a.claim AS claim"
)
SET_CLAIMS = (
    f"UNWIND $rows AS row MATCH {node('f', Label.FACT, fact_key='row.fact_key')}"
    f"-[a:{Rel.ASSERTED_BY}]->{node('s', Label.SOURCE, source_ref='row.source_ref')}"
    " SET a.claim = row.claim"
)


def _links(type: FactLinkType) -> str:
    return (
        f"CALL () {{ UNWIND $rows.{type.name} AS row"
        f" MATCH {node('a', Label.FACT, fact_key='row.from_key')}"
        f" MATCH {node('b', Label.FACT, fact_key='row.to_key')}"
        f" MERGE (a)-[:{type.name}]->(b) }}"
    )


# `$rows` maps each FactLinkType name to its rows; the statement creates only fact links,
# so its relationships_created counter is the number of links added.
WRITE_LINKS = " ".join(_links(t) for t in FactLinkType)
_ASSERTIONS = (
    f"MATCH (f)-[a:{Rel.ASSERTED_BY}]->(s:{Label.SOURCE})"
    " RETURN f.fact_key AS fact_key, a.claim AS claim, s.data AS source"
)
LIST_ASSERTIONS = f"{scan('f', Label.FACT)} AND ($kind IS NULL OR f.kind = $kind) {_ASSERTIONS}"
FACT_ASSERTIONS = f"MATCH {node('f', Label.FACT, fact_key='$fact_key')} {_ASSERTIONS}"


LIST_LINKS = (
    f"{scan('a', Label.FACT)} MATCH (a)-[r:{LINK_RELS}]->(b:{Label.FACT})"
    " RETURN a.fact_key AS from_key, b.fact_key AS to_key, type(r) AS type"
)

# sessions and messages

_SESSION = "s {.session_id, .status, .processed_through, .created_at} AS session"
CREATE_SESSION = (
    f"CREATE {node('s', Label.SESSION, session_id='$session_id')}"
    " SET s.status = $status, s.processed_through = $processed_through,"
    " s.created_at = $created_at"
)
GET_SESSION = f"MATCH {node('s', Label.SESSION, session_id='$session_id')} RETURN {_SESSION}"
LIST_SESSIONS = f"{scan('s', Label.SESSION)} RETURN {_SESSION}"
CLOSE_SESSION = (
    f"MATCH {node('s', Label.SESSION, session_id='$session_id')}"
    f" SET s.status = $status RETURN {_SESSION}"
)
LOCK_SESSION = (
    f"MATCH {node('s', Label.SESSION, session_id='$session_id')} {LOCK.format('s')}"
    " RETURN count(s) AS found"
)
# The last seq comes from the key index, not from PART_OF edges: a message created by any
# writer counts, so a seq that is taken is never handed out again.
SESSION_TAIL = (
    f"MATCH {node('s', Label.SESSION, session_id='$session_id')}"
    f" OPTIONAL MATCH (m:{Label.MESSAGE}) WHERE m.org = $org AND m.patient = $patient"
    " AND m.session_id = $session_id AND m.seq IS NOT NULL"
    " RETURN s.status AS status, coalesce(max(m.seq), 0) AS last"
)
APPEND_MESSAGES = (
    f"MATCH {node('s', Label.SESSION, session_id='$session_id')} UNWIND $rows AS row"
    f" CREATE {node('m', Label.MESSAGE, session_id='$session_id', seq='row.seq')}"
    f"-[:{Rel.PART_OF}]->(s) SET m.role = row.role, m.text = row.text,"
    " m.timestamp = row.timestamp"
)
LIST_MESSAGES = (
    f"MATCH (m:{Label.MESSAGE}) WHERE m.org = $org AND m.patient = $patient"
    " AND m.session_id = $session_id AND m.seq > $after"
    " RETURN m {.session_id, .seq, .role, .text, .timestamp} AS message ORDER BY m.seq"
)
MOVE_WATERMARK = (
    f"MATCH {node('s', Label.SESSION, session_id='$session_id')}"
    " WHERE s.processed_through = $expected SET s.processed_through = $new"
    " RETURN count(s) AS moved"
)

# memories and relationships

EXISTING_SESSIONS = f"UNWIND $ids AS id MATCH {node('s', Label.SESSION, session_id='id')} RETURN id"
EXISTING_MEMORIES = f"UNWIND $ids AS id MATCH {node('m', Label.MEMORY, memory_id='id')} RETURN id"
CREATE_MEMORIES = (
    f"UNWIND $rows AS row MATCH {node('s', Label.SESSION, session_id='row.session_id')}"
    f" CREATE {node('m', Label.MEMORY, memory_id='row.memory_id')}-[:{Rel.FROM}]->(s)"
    " SET m.session_id = row.session_id, m.type = row.type, m.created_at = row.created_at,"
    " m.data = row.data"
)
RELATABLE = (
    f"UNWIND $rows AS row OPTIONAL MATCH {node('m', Label.MEMORY, memory_id='row.memory_id')}"
    f" OPTIONAL MATCH {node('f', Label.FACT, fact_key='row.fact_key')}"
    " RETURN row.i AS i,"
    f" m IS NOT NULL AND f IS NOT NULL AND NOT EXISTS {{ (m)-[:{MEMORY_RELS}]->(f) }} AS ok"
)


def relate(type: RelationshipType) -> str:
    """Creates memory-to-fact relationships of one type."""
    return (
        f"UNWIND $rows AS row MATCH {node('m', Label.MEMORY, memory_id='row.memory_id')}"
        f" MATCH {node('f', Label.FACT, fact_key='row.fact_key')}"
        f" CREATE (m)-[r:{type.name}]->(f) SET r.rationale = row.rationale,"
        " r.confidence = row.confidence, r.method = row.method, r.data = row.data"
    )


RELATES = {t: relate(t) for t in RelationshipType}
_MEMORY = "m.data AS data, m.created_at AS created_at, m.memory_id AS memory_id"
LIST_MEMORIES = (
    f"{scan('m', Label.MEMORY)} AND ($type IS NULL OR m.type = $type) RETURN {_MEMORY},"
    f" [(m)-[r:{MEMORY_RELS}]->(f:{Label.FACT}) | [f.fact_key, r.data]] AS relationships,"
    f" [(v:{Label.REVIEW})-[:{Rel.REVIEWS}]->(m) | v.data] AS reviews"
)
GET_MEMORY = f"MATCH {node('m', Label.MEMORY, memory_id='$memory_id')} RETURN m.data AS data"

# reviews

GET_REVIEW = f"MATCH {node('v', Label.REVIEW, review_id='$review_id')} RETURN v.review_id AS id"
CREATE_REVIEW = (
    f"MATCH {node('m', Label.MEMORY, memory_id='$memory_id')}"
    f" CREATE {node('v', Label.REVIEW, review_id='$review_id')}-[:{Rel.REVIEWS}]->(m)"
    " SET v.memory_id = $memory_id, v.created_at = $created_at, v.data = $data"
    " RETURN count(v) AS created"
)
LIST_REVIEWS = (
    f"MATCH (v:{Label.REVIEW})-[:{Rel.REVIEWS}]->{node('m', Label.MEMORY, memory_id='$memory_id')}"
    " RETURN v.data AS data"
)

# erasure


def erase(label: Label) -> str:
    """Detach-deletes up to `$limit` nodes of one label in scope."""
    return f"{scan('n', label)} WITH n LIMIT $limit DETACH DELETE n"


ERASE = {label: erase(label) for label in ERASE_ORDER}
_AUDIT_OF_PATIENT = f"MATCH (e:{Label.AUDIT}) WHERE e.org = $org AND e.patient = $patient"
# Erasure keeps audit events and replaces their patient with $erased, in batches.
ANONYMISE_AUDIT = f"{_AUDIT_OF_PATIENT} WITH e LIMIT $limit SET e.patient = $erased"
# One row per label: its nodes in scope and the edges that leave them; then audit events.
COUNT_ITEMS = " UNION ALL ".join(
    [
        *(
            f"{scan('n', label)} RETURN count(n) + sum(COUNT {{ (n)-->() }}) AS items"
            for label in ERASE_ORDER
        ),
        f"{_AUDIT_OF_PATIENT} RETURN count(e) AS items",
    ]
)

# audit

APPEND_AUDIT = f"UNWIND $rows AS row CREATE (e:{Label.AUDIT}) SET e = row"
LIST_AUDIT = (
    f"MATCH (e:{Label.AUDIT}) WHERE e.org = $org AND e.time IS NOT NULL"
    " AND ($patient IS NULL OR e.patient = $patient)"
    " RETURN e {.event_id, .org, .patient, .time, .actor, .action, .outcome, .correlation_id}"
    " AS event ORDER BY e.time DESC, e.event_id LIMIT $limit"
)
