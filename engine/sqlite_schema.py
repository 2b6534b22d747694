"""The SQLite schema: every table keyed by (org, patient) first."""

PRAGMAS = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA foreign_keys = ON",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA secure_delete = ON",
    "PRAGMA busy_timeout = 60000",
    # Reads pick patients at random: keep hot pages in memory (64 MiB cache; up to 2 GiB of
    # the file mapped, SQLite's largest by default, so pages the OS holds are not copied).
    "PRAGMA cache_size = -65536",
    "PRAGMA mmap_size = 2147418112",
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
CREATE TABLE IF NOT EXISTS memory_reviews (
    org TEXT NOT NULL, patient TEXT NOT NULL, review_id TEXT NOT NULL, memory_id TEXT NOT NULL,
    created_at TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (org, patient, review_id),
    FOREIGN KEY (org, patient, memory_id) REFERENCES memories ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS reviews_by_memory ON memory_reviews (org, patient, memory_id);
CREATE TABLE IF NOT EXISTS patient_flags (
    org TEXT NOT NULL, patient TEXT NOT NULL, memory_paused INTEGER NOT NULL,
    PRIMARY KEY (org, patient),
    FOREIGN KEY (org, patient) REFERENCES patients ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS audit_events (
    org TEXT NOT NULL, event_id TEXT NOT NULL, patient TEXT, time TEXT NOT NULL,
    actor TEXT NOT NULL, action TEXT NOT NULL, outcome INTEGER NOT NULL,
    correlation_id TEXT NOT NULL,
    PRIMARY KEY (org, event_id)
);
CREATE INDEX IF NOT EXISTS audit_by_time ON audit_events (org, time);
CREATE INDEX IF NOT EXISTS audit_by_patient ON audit_events (org, patient, time);
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit_events
BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_only_anonymised BEFORE UPDATE ON audit_events
WHEN NEW.patient IS NOT 'erased' OR NEW.org IS NOT OLD.org OR NEW.event_id IS NOT OLD.event_id
    OR NEW.time IS NOT OLD.time OR NEW.actor IS NOT OLD.actor OR NEW.action IS NOT OLD.action
    OR NEW.outcome IS NOT OLD.outcome OR NEW.correlation_id IS NOT OLD.correlation_id
BEGIN SELECT RAISE(ABORT, 'audit events are append-only; erasure only anonymises them'); END;
CREATE TRIGGER IF NOT EXISTS memories_append_only BEFORE UPDATE ON memories
BEGIN SELECT RAISE(ABORT, 'memories are append-only'); END;
CREATE TRIGGER IF NOT EXISTS relationships_append_only BEFORE UPDATE ON relationships
BEGIN SELECT RAISE(ABORT, 'relationships are append-only'); END;
CREATE TRIGGER IF NOT EXISTS reviews_append_only BEFORE UPDATE ON memory_reviews
BEGIN SELECT RAISE(ABORT, 'memory reviews are append-only'); END;
"""

# Children first, so that erasure never depends on cascades.
ERASE_ORDER = (
    "memory_reviews",
    "relationships",
    "memories",
    "messages",
    "sessions",
    "fact_links",
    "assertions",
    "sources",
    "facts",
    "patient_flags",
    "patients",
)

# Erasure keeps the patient's audit events and replaces the patient with audit.ERASED.
ANONYMISE_AUDIT = "UPDATE audit_events SET patient = 'erased' WHERE org = ? AND patient = ?"
COUNT_AUDIT = "SELECT COUNT(*) FROM audit_events WHERE org = ? AND patient = ?"
INSERT_AUDIT = "INSERT INTO audit_events VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
SELECT_AUDIT = """
SELECT event_id, org, patient, time, actor, action, outcome, correlation_id FROM audit_events
WHERE org = ? AND (? IS NULL OR patient = ?) ORDER BY time DESC, event_id LIMIT ?
"""

# Facts first, in key order (the primary key's, so no sort), then each one's claims and
# sources. CROSS JOIN fixes that order: left to choose, SQLite starts from all the patient's
# assertions and looks up every one's source and fact before the kind filter drops most.
SELECT_ASSERTIONS = """
SELECT f.fact_key, a.claim, s.data AS source
FROM facts f
CROSS JOIN assertions a ON a.org = f.org AND a.patient = f.patient AND a.fact_key = f.fact_key
CROSS JOIN sources s ON s.org = a.org AND s.patient = a.patient AND s.source_ref = a.source_ref
WHERE f.org = ? AND f.patient = ?
"""
# The kinds are one JSON array parameter, so the statement is the same for any of them.
SELECT_KINDS = (
    SELECT_ASSERTIONS + "AND f.kind IN (SELECT value FROM json_each(?)) ORDER BY f.fact_key"
)

INSERT_REVIEW = "INSERT INTO memory_reviews VALUES (?, ?, ?, ?, ?, ?)"
# Oldest first; `? IS NULL` selects every memory's reviews at once.
SELECT_REVIEWS = """
SELECT data FROM memory_reviews WHERE org = ? AND patient = ? AND (? IS NULL OR memory_id = ?)
ORDER BY created_at, review_id
"""
