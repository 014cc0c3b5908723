#!/usr/bin/env bash
# start-virtuoso.sh installs Debian's Virtuoso 7 (virtuoso-opensource-7-bin) when it is
# missing and starts a throwaway Virtuoso server on loopback for the remote SPARQL tests:
# its own database directory, its own ports (not Virtuoso's defaults 1111/8890, so a
# system Virtuoso cannot clash), SPARQL Update granted to the anonymous SPARQL user and
# ResultSetMaxRows left at 10,000 (the trap the client must detect). It waits until the
# SPARQL endpoint answers, then prints the two endpoint URLs to export.
#
# It is idempotent: when a server is already answering on the port it does nothing. It
# uses apt-get with the machine's configured sources (sudo only when not root).
#
# Environment (all optional):
#   VIRTUOSO_DIR        database directory            (default /tmp/meridian-virtuoso)
#   VIRTUOSO_HTTP_PORT  HTTP (SPARQL) port on 127.0.0.1 (default 18890)
#   VIRTUOSO_SQL_PORT   SQL (isql) port on 127.0.0.1    (default 11111)
#   VIRTUOSO_DBA_PASSWORD  dba password, set on first start (default dba)
set -euo pipefail

DIR=${VIRTUOSO_DIR:-/tmp/meridian-virtuoso}
HTTP_PORT=${VIRTUOSO_HTTP_PORT:-18890}
SQL_PORT=${VIRTUOSO_SQL_PORT:-11111}
DBA_PASSWORD=${VIRTUOSO_DBA_PASSWORD:-dba}
BIN=/usr/bin/virtuoso-t
ISQL=/usr/bin/isql-vt
ENDPOINT="http://127.0.0.1:$HTTP_PORT/sparql"

log() { echo "start-virtuoso: $*" >&2; }
die() { log "error: $*"; exit 1; }

ready() {
  curl -fsS -m 2 -o /dev/null -H 'Accept: application/sparql-results+json' \
    --data-urlencode 'query=ASK {}' "$ENDPOINT" 2>/dev/null
}

print_env() {
  echo "export MERIDIAN_SPARQL_ENDPOINT=$ENDPOINT"
  echo "export MERIDIAN_SPARQL_UPDATE_ENDPOINT=$ENDPOINT"
}

if ready; then
  log "Virtuoso already answering on $ENDPOINT"
  print_env
  exit 0
fi

command -v curl >/dev/null || die "curl not found"

if [ ! -x "$BIN" ] || [ ! -x "$ISQL" ]; then
  command -v apt-get >/dev/null || die "apt-get not found: this script needs Debian"
  SUDO=
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "not root and no sudo: cannot install virtuoso-opensource-7-bin"
    SUDO=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  log "installing virtuoso-opensource-7-bin"
  if ! $SUDO apt-get install -y -qq --no-install-recommends virtuoso-opensource-7-bin >/dev/null; then
    log "apt-get install failed; refreshing package lists and retrying"
    $SUDO apt-get update -qq >/dev/null
    $SUDO apt-get install -y -qq --no-install-recommends virtuoso-opensource-7-bin >/dev/null
  fi
  [ -x "$BIN" ] || die "$BIN is missing after installing virtuoso-opensource-7-bin"
fi

mkdir -p "$DIR"
FRESH=0
[ -f "$DIR/virtuoso.db" ] || FRESH=1

cat >"$DIR/virtuoso.ini" <<EOF
[Database]
DatabaseFile      = $DIR/virtuoso.db
ErrorLogFile      = $DIR/virtuoso.log
LockFile          = $DIR/virtuoso.lck
TransactionFile   = $DIR/virtuoso.trx
xa_persistent_file = $DIR/virtuoso.pxa
ErrorLogLevel     = 7
FileExtend        = 200
MaxCheckpointRemap = 2000
Striping          = 0
TempStorage       = TempDatabase

[TempDatabase]
DatabaseFile      = $DIR/virtuoso-temp.db
TransactionFile   = $DIR/virtuoso-temp.trx
MaxCheckpointRemap = 2000
Striping          = 0

[Parameters]
ServerPort        = 127.0.0.1:$SQL_PORT
LiteMode          = 0
DisableUnixSocket = 1
DisableTcpSocket  = 0
ServerThreads     = 20
CheckpointInterval = 60
NumberOfBuffers   = 170000
MaxDirtyBuffers   = 130000
MaxQueryMem       = 1G
TransactionAfterImageLimit = 500000000
DirsAllowed       = ., $DIR
VADInstallDir     = /usr/share/virtuoso-opensource-7/vad

[HTTPServer]
ServerPort        = 127.0.0.1:$HTTP_PORT
ServerRoot        = $DIR
ServerThreads     = 20
MaxClientConnections = 20
KeepAliveTimeout  = 10
MaxKeepAlives     = 10
EnabledDavVSP     = 0
HTTPProxyEnabled  = 0

[SPARQL]
ResultSetMaxRows  = 10000
MaxQueryExecutionTime = 60
DefaultQuery      = select distinct ?Concept where {[] a ?Concept} LIMIT 100
DeferInferenceRulesInit = 0
EOF

if [ -f "$DIR/virtuoso.lck" ]; then
  pid=$(sed -n 's/^VIRT_PID=//p' "$DIR/virtuoso.lck" 2>/dev/null || true)
  if [ -n "${pid:-}" ] && kill -0 "$pid" 2>/dev/null; then
    log "Virtuoso (pid $pid) is starting; waiting"
  else
    rm -f "$DIR/virtuoso.lck"
  fi
fi

if ! [ -f "$DIR/virtuoso.lck" ]; then
  log "starting Virtuoso in $DIR (SQL 127.0.0.1:$SQL_PORT, HTTP 127.0.0.1:$HTTP_PORT)"
  (cd "$DIR" && "$BIN" +configfile "$DIR/virtuoso.ini" +wait >"$DIR/start.out" 2>&1) ||
    die "virtuoso-t failed to start; see $DIR/start.out and $DIR/virtuoso.log"
fi

for _ in $(seq 1 120); do
  ready && break
  sleep 0.5
done
ready || die "Virtuoso did not answer on $ENDPOINT within 60 s; see $DIR/virtuoso.log"

# The anonymous SPARQL user may update (the test server is on loopback only), and the
# dba password is set on a fresh database.
"$ISQL" "127.0.0.1:$SQL_PORT" dba dba exec="GRANT SPARQL_UPDATE TO \"SPARQL\";" >/dev/null 2>&1 ||
  "$ISQL" "127.0.0.1:$SQL_PORT" dba "$DBA_PASSWORD" exec="GRANT SPARQL_UPDATE TO \"SPARQL\";" >/dev/null ||
  die "could not grant SPARQL_UPDATE"
if [ "$FRESH" -eq 1 ] && [ "$DBA_PASSWORD" != dba ]; then
  "$ISQL" "127.0.0.1:$SQL_PORT" dba dba exec="SET PASSWORD dba $DBA_PASSWORD;" >/dev/null
fi

log "Virtuoso ready on $ENDPOINT"
print_env
