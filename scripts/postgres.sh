#!/usr/bin/env bash
# Starts or stops a throwaway Postgres server for Cordon's tests: a cluster in a
# temporary folder, owned by the unprivileged `postgres` user when run as root,
# listening on loopback only, with one database `cordon` that the `cordon` role
# owns without a password.
#
#   eval "$(scripts/postgres.sh start)"   # exports CORDON_TEST_POSTGRES and CORDON_TEST_POSTGRES_DIR
#   scripts/postgres.sh stop "$CORDON_TEST_POSTGRES_DIR"
#
# When Debian's `postgresql` package is missing and this runs as root, it is
# installed first. Everything it reports goes to stderr; stdout carries only
# the exports.
set -euo pipefail

find_bin() {
    local dir
    for dir in /usr/lib/postgresql/*/bin; do
        if [ -x "$dir/initdb" ]; then
            echo "$dir"
            return 0
        fi
    done
    return 1
}

# Run a Postgres program as the cluster's owner.
as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

start() {
    local bin
    if ! bin="$(find_bin)"; then
        if [ "$(id -u)" != 0 ]; then
            echo "error: Postgres is not installed (Debian: apt-get install postgresql)" >&2
            exit 1
        fi
        echo "installing Debian's postgresql package" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2
        bin="$(find_bin)"
    fi
    local dir port
    dir="$(mktemp -d /tmp/cordon-postgres.XXXXXX)"
    chmod 755 "$dir"
    if [ "$(id -u)" = 0 ]; then
        chown postgres: "$dir"
    fi
    as_owner "$bin/initdb" -D "$dir/data" -U cordon --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log" >&2
        exit 1
    }
    # A free loopback port: ask the kernel for one, then hand it to Postgres.
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -s start \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300 -c fsync=on" >&2 || {
        cat "$dir/server.log" >&2
        exit 1
    }
    "$bin/createdb" -h 127.0.0.1 -p "$port" -U cordon cordon >&2
    echo "Postgres $("$bin/postgres" --version | awk '{print $3}') for the tests on 127.0.0.1:$port ($dir)" >&2
    echo "export CORDON_TEST_POSTGRES=postgres://cordon@127.0.0.1:$port/cordon"
    echo "export CORDON_TEST_POSTGRES_DIR=$dir"
}

stop() {
    local dir="${1:?usage: postgres.sh stop DIR}" bin
    bin="$(find_bin)"
    if [ -d "$dir/data" ]; then
        as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w -s stop >&2 || true
    fi
    rm -rf "$dir"
}

case "${1:-}" in
    start) start ;;
    stop) stop "${2:-}" ;;
    *)
        echo "usage: postgres.sh start | stop DIR" >&2
        exit 2
        ;;
esac
