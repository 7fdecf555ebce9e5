#!/bin/sh
# First start: initdb, a login role with CREATEDB (the db family clones per-session databases from
# templates) and password auth from the network; then run postgres in the foreground.
set -eu
: "${POSTGRES_USER:=envhub}" "${POSTGRES_PASSWORD:=envhub}" "${POSTGRES_DB:=envhub}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  initdb -D "$PGDATA" -U postgres --auth-local=trust --auth-host=scram-sha-256 -E UTF8 >/dev/null
  printf "listen_addresses = '*'\nmax_connections = 300\nfsync = off\nsynchronous_commit = off\n" >> "$PGDATA/postgresql.conf"
  printf "host all all 0.0.0.0/0 scram-sha-256\nhost all all ::/0 scram-sha-256\n" >> "$PGDATA/pg_hba.conf"
  postgres --single -D "$PGDATA" postgres >/dev/null <<SQL
CREATE ROLE "$POSTGRES_USER" LOGIN CREATEDB PASSWORD '$POSTGRES_PASSWORD';
SQL
  postgres --single -D "$PGDATA" postgres >/dev/null <<SQL
CREATE DATABASE "$POSTGRES_DB" OWNER "$POSTGRES_USER";
SQL
fi
exec postgres -D "$PGDATA"
