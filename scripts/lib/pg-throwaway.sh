# Sourced by the central-store benchmarks: starts a throw-away PostgreSQL cluster (PostgreSQL's
# own initdb and pg_ctl, listening on 127.0.0.1 only, trust authentication) in a new temporary
# folder, and stops and removes it at exit. Sets: tmp (the folder), pgbin, url (for --db),
# psql_rh (a psql command line for the cluster). Needs: set -euo pipefail in the caller.
pgbin="${RACEHORSE_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}"
[ -x "$pgbin/initdb" ] || { echo "no PostgreSQL server binaries (apt-get install postgresql)" >&2; exit 2; }
tmp="$(mktemp -d "${DIR:-/var/tmp}/rh-pg.XXXXXX")"
chmod 711 "$tmp"
as_owner=()
if [ "$(id -u)" = 0 ]; then as_owner=(runuser -u postgres --); fi
mkdir "$tmp/pg"
[ ${#as_owner[@]} -gt 0 ] && chown postgres "$tmp/pg"
pg_cleanup() {
  "${as_owner[@]}" "$pgbin/pg_ctl" -D "$tmp/pg/data" -m fast stop >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap pg_cleanup EXIT INT TERM
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
"${as_owner[@]}" "$pgbin/initdb" -D "$tmp/pg/data" -U rh --auth=trust -E UTF8 --locale=C -N >/dev/null
"${as_owner[@]}" "$pgbin/pg_ctl" -D "$tmp/pg/data" -l "$tmp/pg/log" -w \
  -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=''" start >/dev/null
url="postgres://rh@127.0.0.1:$port/postgres?sslmode=disable"
psql_rh=("${as_owner[@]}" "$pgbin/psql" -h 127.0.0.1 -p "$port" -U rh -d postgres -v ON_ERROR_STOP=1 -Atq)
