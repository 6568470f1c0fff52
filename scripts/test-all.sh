#!/usr/bin/env bash
# The whole test suite: types, unit tests, integration tests on PGlite and a throwaway PostgreSQL
# cluster, a production build, and end-to-end tests in headless Chromium against that build.
set -euo pipefail
cd "$(dirname "$0")/.."
export NEXT_TELEMETRY_DISABLED=1

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "typecheck"
npx tsc --noEmit

step "unit tests"
npx vitest run --project unit

step "integration tests (PGlite + PostgreSQL)"
npx vitest run --project integration

step "build"
node node_modules/next/dist/bin/next build

step "crash trials (SIGKILL on PGlite and PostgreSQL, database outage)"
npx tsx scripts/hardening/crash-trials.ts

step "many instances (two apps on one PostgreSQL, 8 writers)"
npx tsx scripts/hardening/many-instances.ts

step "end-to-end tests (Chromium)"
npx playwright test
