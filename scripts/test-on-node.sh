#!/usr/bin/env bash
# Runs the whole test suite on another supported Node, in a second copy of the
# project and its dependencies, so the working copy keeps its pinned Node 24:
#
#   npm run test:node22            # the Node 22 LTS CI checks besides the pinned Node 24
#   bash scripts/test-on-node.sh 22.23.3 [COPY_DIR]
#
# The copy pins `node@VERSION` in its own package.json (the registry's `node`
# package puts that binary in its node_modules/.bin, which npm scripts use
# first), installs, and runs `npm test` with this shell's environment
# (DATABASE_URL / REDIS_URL included).
set -euo pipefail
version=${1:?usage: test-on-node.sh NODE_VERSION [COPY_DIR]}
root=$(cd "$(dirname "$0")/.." && pwd)
copy=${2:-$(mktemp -d "${TMPDIR:-/tmp}/pet-adoption-api-node$version.XXXXXX")}
mkdir -p "$copy"

# The tracked files and the new ones not ignored: what a clone would hold.
(cd "$root" && git ls-files -z --cached --others --exclude-standard --deduplicate \
  | while IFS= read -r -d '' file; do [ -e "$file" ] && printf '%s\0' "$file"; done \
  | xargs -0 cp --parents -t "$copy")
cd "$copy"
npm pkg set "devDependencies.node=$version"
npm install --no-audit --no-fund
actual=$(npm exec -- node -p process.versions.node)
[ "$actual" = "$version" ] || { echo "expected Node $version in the copy, got $actual" >&2; exit 1; }
# A repository of its own, as a clone would be: tests use git (api:diff --base
# HEAD, project copies listed by git ls-files).
git init -q && git add -A && git -c user.name=test-on-node -c user.email=test-on-node@localhost commit -qm "copy for Node $version"
echo "::: npm test and npm run test:e2e on Node $actual in $copy"
npm test
npm run test:e2e
