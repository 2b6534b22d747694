"""The SQLite schema: every table keyed by (org, patient) first."""

PRAGMAS = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA foreign_keys = ON",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA secure_delete = ON",
    "PRAGMA busy_timeout = 60000",
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS patients (
    org TEXT NOT NULL, patient TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (org, patient)
);
CREATE TABLE IF NOT EXISTS facts (
    org TEXT NOT NULL, patient TEXT NOT NULL, fact_key TEXT NOT NULL, kind TEXT NOT NULL,
    PRIMARY KEY (org, patient, fact_key),
    FOREIGN KEY (org, patient) REFERENCES patients ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS sources (
    org TEXT NOT NULL, patient TEXT NOT NULL, source_ref TEXT NOT NULL,
    content_hash TEXT NOT NULL, last_updated TEXT, data TEXT NOT NULL,
    PRIMARY KEY (org, patient, source_ref),
    FOREIGN KEY (org, patient) REFERENCES patients ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS assertions (
    org TEXT NOT NULL, patient TEXT NOT NULL, source_ref TEXT NOT NULL, fact_key TEXT NOT NULL,
    claim TEXT NOT NULL,
    PRIMARY KEY (org, patient, source_ref, fact_key),
    FOREIGN KEY (org, patient, source_ref) REFERENCES sources ON DELETE CASCADE,
    FOREIGN KEY (org, patient, fact_key) REFERENCES facts ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS assertions_by_fact ON assertions (org, patient, fact_key);
CREATE TABLE IF NOT EXISTS fact_links (
    org TEXT NOT NULL, patient TEXT NOT NULL, from_key TEXT NOT NULL, to_key TEXT NOT NULL,
    type TEXT NOT NULL,
    PRIMARY KEY (org, patient, from_key, to_key, type),
    FOREIGN KEY (org, patient, from_key) REFERENCES facts ON DELETE CASCADE,
    FOREIGN KEY (org, patient, to_key) REFERENCES facts ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS sessions (
    org TEXT NOT NULL, patient TEXT NOT NULL, session_id TEXT NOT NULL, status TEXT NOT NULL,
    processed_through INTEGER NOT NULL, created_at TEXT NOT NULL,
    PRIMARY KEY (org, patient, session_id),
    FOREIGN KEY (org, patient) REFERENCES patients ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS messages (
    org TEXT NOT NULL, patient TEXT NOT NULL, session_id TEXT NOT NULL, seq INTEGER NOT NULL,
    role TEXT NOT NULL, text TEXT NOT NULL, timestamp TEXT NOT NULL,
    PRIMARY KEY (org, patient, session_id, seq),
    FOREIGN KEY (org, patient, session_id) REFERENCES sessions ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS memories (
    org TEXT NOT NULL, patient TEXT NOT NULL, memory_id TEXT NOT NULL, session_id TEXT NOT NULL,
    type TEXT NOT NULL, created_at TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (org, patient, memory_id),
    FOREIGN KEY (org, patient, session_id) REFERENCES sessions ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS relationships (
    org TEXT NOT NULL, patient TEXT NOT NULL, memory_id TEXT NOT NULL, fact_key TEXT NOT NULL,
    type TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (org, patient, memory_id, fact_key),
    FOREIGN KEY (org, patient, memory_id) REFERENCES memories ON DELETE CASCADE,
    FOREIGN KEY (org, patient, fact_key) REFERENCES facts ON DELETE CASCADE
);
CREATE TRIGGER IF NOT EXISTS memories_append_only BEFORE UPDATE ON memories
BEGIN SELECT RAISE(ABORT, 'memories are append-only'); END;
CREATE TRIGGER IF NOT EXISTS relationships_append_only BEFORE UPDATE ON relationships
BEGIN SELECT RAISE(ABORT, 'relationships are append-only'); END;
"""

# Children first, so that erasure never depends on cascades.
ERASE_ORDER = (
    "relationships",
    "memories",
    "messages",
    "sessions",
    "fact_links",
    "assertions",
    "sources",
    "facts",
    "patients",
)

SELECT_ASSERTIONS = """
SELECT f.fact_key, a.claim, s.data AS source
FROM facts f
JOIN assertions a ON a.org = f.org AND a.patient = f.patient AND a.fact_key = f.fact_key
JOIN sources s ON s.org = a.org AND s.patient = a.patient AND s.source_ref = a.source_ref
WHERE f.org = ? AND f.patient = ?
"""
