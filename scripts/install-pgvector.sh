#!/usr/bin/env bash
# install-pgvector.sh builds pgvector 0.8.0 from Debian trixie's source package against
# bookworm's postgresql-server-dev-15 and installs it into PostgreSQL 15: it downloads
# the source package with apt-get source (from the Debian archive the machine's own apt
# sources already use, with trixie as the suite), builds it with PGXS and installs it.
# It is idempotent: when the extension is already installed it does nothing. It needs
# root and Debian's apt; the system's own apt sources and lists are left untouched (a
# private sources file and lists directory), and it names no package host itself.
set -euo pipefail

PG_MAJOR=15
PG_CONFIG=/usr/lib/postgresql/$PG_MAJOR/bin/pg_config
CONTROL=/usr/share/postgresql/$PG_MAJOR/extension/vector.control

log() { echo "install-pgvector: $*" >&2; }
die() { log "error: $*"; exit 1; }

if [ -f "$CONTROL" ]; then
  echo "pgvector already installed"
  exit 0
fi

[ "$(id -u)" -eq 0 ] || die "must run as root (it installs packages and writes into PostgreSQL's directories)"
command -v apt-get >/dev/null || die "apt-get not found: this script needs Debian"

export DEBIAN_FRONTEND=noninteractive
log "installing build inputs: postgresql-server-dev-$PG_MAJOR make gcc"
if ! apt-get install -y -qq "postgresql-server-dev-$PG_MAJOR" make gcc >/dev/null; then
  log "apt-get install failed; refreshing package lists and retrying"
  apt-get update -qq >/dev/null
  apt-get install -y -qq "postgresql-server-dev-$PG_MAJOR" make gcc >/dev/null
fi
[ -x "$PG_CONFIG" ] || die "$PG_CONFIG is missing after installing postgresql-server-dev-$PG_MAJOR"

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
chmod 755 "$W"
# apt downloads as its sandbox user; let it write into the work directory.
if id _apt >/dev/null 2>&1; then chown _apt "$W"; fi
mkdir -p "$W/lists/partial"

# The Debian archive this machine installs its own release from: the URI and keyring
# of the first apt source (deb822 .sources or one-line .list) whose suite is the
# release's codename itself (not -security, -updates or a third party's suite).
. /etc/os-release
CODENAME=${VERSION_CODENAME:-}
[ -n "$CODENAME" ] || die "/etc/os-release names no VERSION_CODENAME: this script needs Debian"
debian_source() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v rel="$CODENAME" '
      function flush() { if (uri != "" && match_) { print uri, key; found = 1; exit } uri = ""; key = ""; match_ = 0 }
      /^[ \t]*$/      { flush(); next }
      /^URIs:/         { uri = $2 }
      /^Signed-By:/    { key = $2 }
      /^Suites:/       { for (i = 2; i <= NF; i++) if ($i == rel) match_ = 1 }
      END              { if (!found) flush() }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk -v rel="$CODENAME" '
      $1 != "deb" { next }
      { i = 2; if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ } }
      $(i + 1) == rel { print $i; exit }' "$f"
  done
}
read -r URIS KEYRING < <(debian_source | head -n1) || true
[ -n "${URIS:-}" ] || die "no apt source for Debian $CODENAME itself is configured in /etc/apt: add the Debian archive (or a mirror) for $CODENAME first"
case "${KEYRING:-}" in /*) ;; *) KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg ;; esac
cat > "$W/trixie-src.sources" <<SRC
Types: deb-src
URIs: $URIS
Suites: trixie
Components: main
Signed-By: $KEYRING
SRC
APTOPTS=(-o "Dir::Etc::sourcelist=$W/trixie-src.sources" -o Dir::Etc::sourceparts=/nonexistent
         -o "Dir::State::Lists=$W/lists")

log "fetching the pgvector source package from Debian trixie ($URIS)"
apt-get "${APTOPTS[@]}" -qq update >/dev/null
(cd "$W" && apt-get "${APTOPTS[@]}" -qq source --download-only pgvector >/dev/null)
ORIG=$(ls "$W"/pgvector_*.orig.tar.* 2>/dev/null | head -n1)
[ -n "$ORIG" ] || die "apt-get source did not download pgvector's orig tarball"
mkdir "$W/src"
tar xf "$ORIG" -C "$W/src"
SRCDIR=$(find "$W/src" -mindepth 1 -maxdepth 1 -type d | head -n1)
[ -n "$SRCDIR" ] || die "unexpected layout of $ORIG"

log "building $(basename "$SRCDIR") against PostgreSQL $PG_MAJOR"
make -s -C "$SRCDIR" OPTFLAGS="" PG_CONFIG="$PG_CONFIG" >/dev/null
make -s -C "$SRCDIR" OPTFLAGS="" PG_CONFIG="$PG_CONFIG" install >/dev/null

[ -f "$CONTROL" ] || die "make install did not write $CONTROL"
log "installed $(basename "$SRCDIR"); CREATE EXTENSION vector now works (as a superuser)"
