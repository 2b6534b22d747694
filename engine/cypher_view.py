"""The one Cypher statement that reads a VFS view: the patient and what the view needs.

Each part is a `COLLECT` subquery confined to `$org` and `$patient` that seeks in the key
index of its label (`engine.cypher` explains the `IS NOT NULL`s); the parts a view does not
need are left out of the statement, so a view pays for nothing else. Values are always
`$parameters`; the statement's text depends on which parts are asked for, nothing else.
"""

from functools import cache

from engine.cypher import LINK_RELS, MEMORY_RELS, Label, Rel, node, scan

_FACTS = (
    f"COLLECT {{ {scan('f', Label.FACT)} AND f.kind IN $kinds"
    f" MATCH (f)-[a:{Rel.ASSERTED_BY}]->(s:{Label.SOURCE})"
    " RETURN {fact_key: f.fact_key, claim: a.claim, source: s.data} } AS assertions"
)
_LINKS = (
    f"COLLECT {{ {scan('a', Label.FACT)} MATCH (a)-[r:{LINK_RELS}]->(b:{Label.FACT})"
    " RETURN {from_key: a.fact_key, to_key: b.fact_key, type: type(r)} } AS links"
)
_MEMORIES = (
    f"COLLECT {{ {scan('m', Label.MEMORY)} RETURN"
    " {data: m.data, created_at: m.created_at, memory_id: m.memory_id,"
    f" relationships: [(m)-[r:{MEMORY_RELS}]->(f:{Label.FACT}) | [f.fact_key, r.data]],"
    f" reviews: [(v:{Label.REVIEW})-[:{Rel.REVIEWS}]->(m) | v.data]}} }} AS memories"
)
_SESSIONS = (
    f"COLLECT {{ {scan('s', Label.SESSION)}"
    " RETURN s {.session_id, .status, .processed_through, .created_at} } AS sessions"
)


@cache
def view(facts: bool, links: bool, memories: bool, sessions: bool) -> str:
    """`MATCH` the patient and `RETURN` its data with the parts asked for."""
    wanted = ((_FACTS, facts), (_LINKS, links), (_MEMORIES, memories), (_SESSIONS, sessions))
    parts = ["p.data AS data", *(part for part, asked in wanted if asked)]
    return f"MATCH {node('p', Label.PATIENT)} RETURN " + ", ".join(parts)
