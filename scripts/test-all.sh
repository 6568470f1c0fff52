#!/usr/bin/env bash
# The whole test suite: types, unit tests, integration tests on PGlite and a throwaway PostgreSQL
# cluster (and the agent API and dashboard ones on a throwaway Citus cluster), a production build,
# and end-to-end tests in headless Chromium against that build.
set -euo pipefail
cd "$(dirname "$0")/.."
export NEXT_TELEMETRY_DISABLED=1

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "typecheck"
npx tsc --noEmit
# No import circle; server/'s folders import only downward (docs/architecture.md "The layers").
node scripts/check-imports.mjs

step "unit tests"
npx vitest run --project unit

step "integration tests (PGlite + PostgreSQL)"
npx vitest run --project integration

step "integration tests on Citus (a coordinator and two workers)"
# The agent API, dashboard and distribution checks against Vigil on a throwaway Citus cluster. The
# extension is built once from the vendored release source when missing (VIGIL_CITUS_BUILD).
VIGIL_TEST_DATABASES=citus VIGIL_CITUS_BUILD="${VIGIL_CITUS_BUILD:-../shared/vendor/citus/build.sh}" \
  npx vitest run --project integration tests/integration/agent-api.test.ts tests/integration/dashboard-queries.test.ts \
    tests/integration/guard-hot-path.test.ts tests/integration/effective-state.test.ts tests/integration/partitions.test.ts \
    tests/integration/session-upgrade.test.ts tests/integration/model-profile-upgrade.test.ts tests/integration/session-behaviour-json-upgrade.test.ts \
    tests/integration/policy-count-indexes.test.ts tests/integration/open-calls.test.ts tests/integration/models-edge-days.test.ts \
    tests/integration/failure-group-rollup.test.ts tests/integration/key-total-rollup.test.ts tests/citus/

step "build"
node node_modules/next/dist/bin/next build

step "Node 20 smoke (the build and the agent API on the machine's Node 20, the supported floor)"
node scripts/node20-smoke.mjs

step "crash trials (SIGKILL on PGlite and PostgreSQL, database outage)"
npx tsx scripts/hardening/crash-trials.ts

step "many instances (two apps on one PostgreSQL, 8 writers)"
npx tsx scripts/hardening/many-instances.ts

step "end-to-end tests (Chromium)"
npx playwright test
