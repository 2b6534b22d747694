#!/usr/bin/env bash
# Stop the Neo4j started by start.sh (same NEO4J_LOCAL_PORT / NEO4J_LOCAL_RUN_DIR).
# Removes the data dir if start.sh created it as a temp dir.
set -euo pipefail

DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PORT="${NEO4J_LOCAL_PORT:-7687}"
RUN_DIR="${NEO4J_LOCAL_RUN_DIR:-$DIR/.run}"
PIDFILE="$RUN_DIR/neo4j-local-$PORT.pid"
TMPHOME_FILE="$RUN_DIR/neo4j-local-$PORT.tmphome"
STOP_TIMEOUT="${NEO4J_LOCAL_STOP_TIMEOUT:-60}"

log() { echo "neo4j-local: $*" >&2; }

if [[ -f "$PIDFILE" ]]; then
  PID="$(cat "$PIDFILE")"
  # Only signal it if it is still our JVM (guards against a recycled pid).
  if kill -0 "$PID" 2>/dev/null && tr '\0' ' ' <"/proc/$PID/cmdline" 2>/dev/null | grep -q Neo4jLocal; then
    kill -TERM "$PID"
    deadline=$(( $(date +%s) + STOP_TIMEOUT ))
    while kill -0 "$PID" 2>/dev/null; do
      if (( $(date +%s) >= deadline )); then
        log "pid $PID did not exit after ${STOP_TIMEOUT}s; sending SIGKILL"
        kill -KILL "$PID" 2>/dev/null || true
        break
      fi
      sleep 0.5
    done
    log "stopped pid $PID"
  else
    log "pid $PID (port $PORT) not running"
  fi
  rm -f "$PIDFILE"
else
  log "no pidfile for port $PORT ($PIDFILE)"
fi

if [[ -f "$TMPHOME_FILE" ]]; then
  TMPHOME="$(cat "$TMPHOME_FILE")"
  case "$TMPHOME" in
    */neo4j-local-*) rm -rf "$TMPHOME" ;;
  esac
  rm -f "$TMPHOME_FILE"
fi
