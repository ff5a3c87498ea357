#!/usr/bin/env bash
# CI: `npm run contract` against `npm start`'s server (the built dist/src/server.js,
# NODE_ENV=production) on each backend: SQLite (a fresh temporary file) and, when
# DATABASE_URL=postgres://... and REDIS_URL are exported (.ci/run does), PostgreSQL+Redis.
# On each backend, one server is fuzzed with every major version of the contract
# (openapi/vN/openapi.yaml: v1 under /v1, v2 under /v2, ...), one run per version.
# A fixed seed keeps CI reproducible (CONTRACT_SEED overrides it); the JSON
# reports (contract-<backend>-<version>.json) are left in CONTRACT_REPORT_DIR
# (default: a temporary directory). Exits non-zero when any run fails.
set -euo pipefail
cd "$(dirname "$0")/.."
NODE="$PWD/node_modules/.bin/node"   # the pinned Node 24, not the system one
SEED="${CONTRACT_SEED:-1}"
WORK="$(mktemp -d)"
REPORTS="${CONTRACT_REPORT_DIR:-$(mktemp -d)}"
mkdir -p "$REPORTS"
# Every major version of the contract, oldest first.
VERSIONS="$(for document in openapi/v*/openapi.yaml; do basename "$(dirname "$document")"; done | sort -V)"
SERVER_PID=""
trap '[ -n "$SERVER_PID" ] && kill -TERM "$SERVER_PID" 2> /dev/null; rm -rf "$WORK"' EXIT

echo "::: contract: build"
npm run --silent build

# run_contract LABEL DATABASE_URL [REDIS_URL]
run_contract() {
  local label="$1" database_url="$2" redis_url="${3:-}" log="$WORK/server-$1.log" port="" key status=0
  echo "::: contract: $label"
  env -u REDIS_URL NODE_ENV=production LOG_LEVEL=info HOST=127.0.0.1 PORT=0 DATABASE_URL="$database_url" \
    ${redis_url:+REDIS_URL="$redis_url" REDIS_KEY_PREFIX="contract-ci-$$:"} \
    "$NODE" dist/src/server.js > "$log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 60); do
    port="$(grep -o '"port":[0-9]*' "$log" | head -1 | cut -d: -f2 || true)"
    [ -n "$port" ] && break
    kill -0 "$SERVER_PID" 2> /dev/null || break
    sleep 0.5
  done
  if [ -z "$port" ]; then
    echo "the server did not start:"; cat "$log"; return 1
  fi
  key="$(env -u REDIS_URL DATABASE_URL="$database_url" ${redis_url:+REDIS_URL="$redis_url"} \
    npm run --silent keys -- create --plan enterprise --rpm 100000 --rpd 10000000 --role staff --label "contract-ci")"
  local logged_before; logged_before="$(wc -l < "$log")"
  local version
  for version in $VERSIONS; do
    echo "::: contract: $label, $version (openapi/$version/openapi.yaml)"
    # The key goes through the environment, not the command line (process lists);
    # the base path (/v1, /v2) comes from the version's document.
    CONTRACT_API_KEY="$key" npm run --silent contract -- --base-url "http://127.0.0.1:$port" --version "$version" \
      --seed "$SEED" --max-examples 25 --rate 200 --time-limit 300 --report "$REPORTS/contract-$label-$version.json" || status=$?
  done
  kill -TERM "$SERVER_PID"
  wait "$SERVER_PID" || { echo "the server did not stop cleanly on SIGTERM:"; tail -20 "$log"; status=1; }
  SERVER_PID=""
  # Errors the fuzzer's requests caused (a 5xx is already a failure; this also catches a logged error behind a 4xx).
  # What the fuzzing left in the database: every pet agrees with its orders.
  env -u REDIS_URL DATABASE_URL="$database_url" npm run --silent check:adoption || status=1
  if tail -n +"$((logged_before + 1))" "$log" | grep -q '"level":[56]0'; then
    echo "the server logged errors during the run:"; tail -n +"$((logged_before + 1))" "$log" | grep '"level":[56]0' | head -5; status=1
  fi
  return "$status"
}

failed=0
run_contract sqlite "sqlite:$WORK/pets.db" || failed=1
if [[ "${DATABASE_URL:-}" =~ ^postgres(ql)?:// && "${REDIS_URL:-}" =~ ^rediss?:// ]]; then
  # A schema of its own, so the run leaves the suites' database alone.
  separator='?'; [[ "$DATABASE_URL" == *\?* ]] && separator='&'
  run_contract postgres+redis "${DATABASE_URL}${separator}schema=contract_ci" "$REDIS_URL" || failed=1
else
  echo "::: contract: postgres+redis skipped (DATABASE_URL=postgres://... and REDIS_URL=redis://... are not both set)"
  [ "${CI:-}" = "true" ] && failed=1
fi
echo "::: contract: reports in $REPORTS"
exit "$failed"
