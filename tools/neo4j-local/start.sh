#!/usr/bin/env bash
# Start an embedded Neo4j Community 5.26 (Bolt on 127.0.0.1, auth disabled) in the background.
#
# Env:
#   NEO4J_LOCAL_PORT       Bolt port (default 7687)
#   NEO4J_LOCAL_HOME       data/home dir (default: a fresh mktemp dir, removed by stop.sh)
#   NEO4J_LOCAL_TIMEOUT    seconds to wait for startup (default 240)
#   NEO4J_LOCAL_JAVA_OPTS  extra JVM options (default "-Xmx2g")
#   NEO4J_LOCAL_PAGECACHE  page cache size, as Neo4j writes sizes (default 256m; size it to
#                          hold the store, as in production, when benchmarking large data)
#   NEO4J_LOCAL_RUN_DIR    where pidfile/log go (default tools/neo4j-local/.run)
#
# Prints the Bolt URI as the only line on stdout; progress goes to stderr.
# Stop it with stop.sh (same NEO4J_LOCAL_PORT).
set -euo pipefail

DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PORT="${NEO4J_LOCAL_PORT:-7687}"
TIMEOUT="${NEO4J_LOCAL_TIMEOUT:-240}"
JAVA_OPTS="${NEO4J_LOCAL_JAVA_OPTS:--Xmx2g}"
PAGECACHE="${NEO4J_LOCAL_PAGECACHE:-256m}"
RUN_DIR="${NEO4J_LOCAL_RUN_DIR:-$DIR/.run}"
PIDFILE="$RUN_DIR/neo4j-local-$PORT.pid"
LOGFILE="$RUN_DIR/neo4j-local-$PORT.log"
TMPHOME_FILE="$RUN_DIR/neo4j-local-$PORT.tmphome"
URI="bolt://127.0.0.1:$PORT"

log() { echo "neo4j-local: $*" >&2; }

mkdir -p "$RUN_DIR"

if [[ -f "$PIDFILE" ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
  log "already running on port $PORT (pid $(cat "$PIDFILE")); run stop.sh first"
  exit 1
fi
rm -f "$PIDFILE" "$TMPHOME_FILE"

if ! python3 - "$PORT" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # ignore TIME_WAIT leftovers
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
finally:
    s.close()
PY
then
  log "port $PORT on 127.0.0.1 is already in use"
  exit 1
fi

if [[ ! -d "$DIR/target/classes" || ! -d "$DIR/target/lib" ]]; then
  log "building (mvn package)..."
  (cd "$DIR" && mvn -q -B -ntp package -DskipTests) >&2
fi

if [[ -n "${NEO4J_LOCAL_HOME:-}" ]]; then
  HOME_DIR="$NEO4J_LOCAL_HOME"
  mkdir -p "$HOME_DIR"
else
  HOME_DIR="$(mktemp -d -t neo4j-local-XXXXXX)"
  echo "$HOME_DIR" > "$TMPHOME_FILE"
fi

start_ts=$(date +%s.%N)
# shellcheck disable=SC2086
nohup java $JAVA_OPTS \
  --add-opens=java.base/java.nio=ALL-UNNAMED \
  --add-opens=java.base/java.io=ALL-UNNAMED \
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
  --add-opens=java.base/java.lang=ALL-UNNAMED \
  -cp "$DIR/target/classes:$DIR/target/lib/*" \
  dev.cce.neo4jlocal.Neo4jLocal "$HOME_DIR" "$PORT" "$PAGECACHE" \
  </dev/null >"$LOGFILE" 2>&1 &
PID=$!
echo "$PID" > "$PIDFILE"
log "started pid $PID (home $HOME_DIR, log $LOGFILE)"

fail() {
  log "$1"
  log "--- last lines of $LOGFILE ---"
  tail -n 50 "$LOGFILE" >&2 || true
  if [[ -f "$HOME_DIR/logs/debug.log" ]]; then
    log "--- last ERROR/WARN lines of $HOME_DIR/logs/debug.log ---"
    grep -E "ERROR|WARN" "$HOME_DIR/logs/debug.log" | tail -n 20 >&2 || true
  fi
  kill "$PID" 2>/dev/null || true
  rm -f "$PIDFILE"
  exit 1
}

deadline=$(( $(date +%s) + TIMEOUT ))
until grep -q "neo4j-local ready" "$LOGFILE" 2>/dev/null; do
  kill -0 "$PID" 2>/dev/null || fail "process exited before becoming ready"
  (( $(date +%s) < deadline )) || fail "not ready after ${TIMEOUT}s"
  sleep 0.5
done
ready_ts=$(date +%s.%N)

# Bolt is bound once the ready line is printed; confirm with the Python driver
# (falls back to a raw Bolt handshake if the driver is not installed).
until python3 - "$URI" <<'PY' 2>/dev/null
import sys
uri = sys.argv[1]
try:
    from neo4j import GraphDatabase
except ImportError:
    import socket, struct
    host, port = uri.rsplit("//", 1)[1].split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(b"\x60\x60\xb0\x17" + struct.pack(">IIII", 0x00000405, 0x00000404, 0, 0))
        if len(s.recv(4)) != 4:
            sys.exit(1)
    print("neo4j-local: python driver missing; raw Bolt handshake OK", file=sys.stderr)
    sys.exit(0)
with GraphDatabase.driver(uri) as d:
    d.verify_connectivity()
PY
do
  kill -0 "$PID" 2>/dev/null || fail "process exited before accepting Bolt connections"
  (( $(date +%s) < deadline )) || fail "Bolt not reachable after ${TIMEOUT}s"
  sleep 1
done

elapsed=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start_ts" "$(date +%s.%N)")
bolt_wait=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$ready_ts" "$(date +%s.%N)")
log "ready in ${elapsed}s at $URI (Bolt check took ${bolt_wait}s after the ready line)"
echo "$URI"
