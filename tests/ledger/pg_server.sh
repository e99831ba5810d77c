#!/usr/bin/env bash
# A throwaway PostgreSQL server for the ledger tests: initdb and pg_ctl in DIR, listening only on a
# Unix socket in DIR (no TCP port, so parallel tests never collide), trust authentication for the
# local socket. Runs the server as the `postgres` user (initdb refuses root).
#   pg_server.sh start DIR   prints the libpq URL of database "ledger" on it
#   pg_server.sh stop DIR    stops it (immediate) and removes DIR
set -euo pipefail
cmd=${1:?start|stop} dir=${2:?directory}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [[ -z $bin || ! -x $bin/initdb ]]; then
  echo "pg_server.sh: no PostgreSQL server under /usr/lib/postgresql (scripts/install_deps.sh installs postgresql-15)" >&2
  exit 2
fi
as_pg() { runuser -u postgres -- "$@"; }
case $cmd in
  start)
    mkdir -p "$dir"
    chown postgres:postgres "$dir"
    chmod 700 "$dir"
    as_pg "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; exit 1; }
    as_pg "$bin/pg_ctl" -D "$dir/data" -w -t 60 -l "$dir/server.log" \
      -o "-k $dir -c listen_addresses='' -c fsync=off -c full_page_writes=off" start >/dev/null ||
      { cat "$dir/server.log" >&2; exit 1; }
    as_pg "$bin/createdb" -h "$dir" -U postgres ledger
    echo "postgresql://postgres@/ledger?host=$dir"
    ;;
  stop)
    [[ -d $dir/data ]] && as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  *)
    echo "pg_server.sh: start|stop DIR" >&2
    exit 2
    ;;
esac
