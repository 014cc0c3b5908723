#!/usr/bin/env bash
# start-postgres.sh starts the local PostgreSQL cluster when it does not accept
# connections on 127.0.0.1:5432, and waits up to 30 seconds for it. Safe to run
# repeatedly: a running server is left alone. Needs root and Debian's postgresql-common.
set -euo pipefail

HOST=127.0.0.1
PORT=5432

log() { echo "start-postgres: $*" >&2; }
die() { log "error: $*"; exit 1; }

command -v pg_isready >/dev/null || die "pg_isready not found: install the Debian package postgresql-15"

if pg_isready -q -h "$HOST" -p "$PORT"; then
  exit 0
fi

command -v pg_ctlcluster >/dev/null || die "pg_ctlcluster not found: install the Debian package postgresql-common"
VERSION=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n1)
[ -n "$VERSION" ] || die "no PostgreSQL cluster configured under /etc/postgresql"
CLUSTER=$(ls "/etc/postgresql/$VERSION" 2>/dev/null | head -n1)
CLUSTER=${CLUSTER:-main}

log "starting PostgreSQL $VERSION/$CLUSTER"
# "already running" is not fatal here: the server may be up but not yet ready.
if ! out=$(pg_ctlcluster --skip-systemctl-redirect "$VERSION" "$CLUSTER" start 2>&1); then
  log "pg_ctlcluster: $out"
fi

for _ in $(seq 1 30); do
  if pg_isready -q -h "$HOST" -p "$PORT"; then
    log "PostgreSQL is accepting connections on $HOST:$PORT"
    exit 0
  fi
  sleep 1
done
die "PostgreSQL $VERSION/$CLUSTER did not accept connections on $HOST:$PORT within 30 s"
