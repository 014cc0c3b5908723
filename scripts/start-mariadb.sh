#!/usr/bin/env bash
# start-mariadb.sh starts the local MariaDB server when it does not accept connections
# on 127.0.0.1:3306 as root with an empty password (the target Query Runner's tests
# create their databases on), and waits up to 30 seconds for it. Safe to run
# repeatedly: a running server is left alone. Needs root and Debian's mariadb-server.
set -euo pipefail

HOST=127.0.0.1
PORT=3306

log() { echo "start-mariadb: $*" >&2; }
die() { log "error: $*"; exit 1; }

command -v mariadb-admin >/dev/null || die "mariadb-admin not found: install the Debian package mariadb-server"

ready() { mariadb-admin --host="$HOST" --port="$PORT" --user=root --connect-timeout=2 ping >/dev/null 2>&1; }

if ready; then
  exit 0
fi

[ -x /usr/sbin/mariadbd ] || die "/usr/sbin/mariadbd not found: install the Debian package mariadb-server"
log "starting MariaDB"
start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd

for _ in $(seq 1 30); do
  if ready; then
    log "MariaDB is accepting connections on $HOST:$PORT"
    exit 0
  fi
  sleep 1
done
die "MariaDB did not accept connections on $HOST:$PORT within 30 s"
