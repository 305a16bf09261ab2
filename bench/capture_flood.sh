#!/bin/bash
# The capture listener under a connection flood from another account (issue 36 item 4), as root:
# two `nobody` processes open and hold as many connections as their open-files limit allows
# against `pgrig capture --listen 127.0.0.1:PORT`, and three psql sessions of the owner connect
# through it meanwhile (5 s each at most). Prints each connect's status and time, then how many
# flood connections the listener closed.
#   bench/capture_flood.sh [PGRIG_BINARY] [PORT]
set -u
BIN=${1:-target/debug/pgrig}; PORT=${2:-6701}
D=$(mktemp -d); export XDG_RUNTIME_DIR=$D
"$BIN" server start >/dev/null || exit 1
HOST=$("$BIN" server status | sed -n 's/^socket dir: *//p')
SPORT=$("$BIN" server status | sed -n 's/^port: *//p')
"$BIN" capture --listen "127.0.0.1:$PORT" --port "$PORT" --upstream "host=$HOST port=$SPORT" \
  -o "$D/c.cap" 2>"$D/err" &
CAP=$!
sleep 1
for _ in 1 2; do
  setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 -c "
import socket, time
end = time.time() + 10
held = []
while time.time() < end:
    try:
        held.append(socket.create_connection(('127.0.0.1', $PORT), timeout=1))
    except OSError:
        time.sleep(0.01)
" &
done
sleep 3
for _ in 1 2 3; do
  s=$(date +%s%N)
  timeout 5 psql -X -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -Atc "select 1" >/dev/null 2>&1
  rc=$?; e=$(date +%s%N)
  echo "connect: exit $rc after $(( (e - s) / 1000000 )) ms"
done
sleep 8
kill $CAP; wait $CAP; tail -1 "$D/err"
"$BIN" server stop >/dev/null; rm -rf "$D"
