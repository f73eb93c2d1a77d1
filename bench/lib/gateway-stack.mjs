// Child process for the gateway rows of `npm run bench`: starts the built CLI (dist/cli/main.js) as the upstream, and
// in front of it `mrtr gateway`, each its own process, and prints `listening on <url>` for the parent: the upstream's
// URL in direct mode, the gateway's otherwise. The parent samples CPU and memory over this process's tree, so a
// gateway row's server CPU is the gateway's plus the upstream's (this launcher only waits).
//
// Usage: node bench/lib/gateway-stack.mjs --port P --mode direct|gateway|full [--root DIR]
//   direct   `mrtr serve --fixture example` alone (no auth): the upstream the other two modes stand in front of
//   gateway  + `mrtr gateway`, one upstream `up`, one rule letting every signed-in caller call every tool, dev tokens
//            (the gateway needs a caller: an anonymous request matches no rule)
//   full     + `mrtr gateway` with the 100 rules of bench/lib/gateway-rules.mjs over ten upstream names (up0 … up9,
//            all the same server), dev tokens, a SQLite replay store and a SQLite audit trail (with its key file)
// Everything written (config, tokens, lock file, databases) goes to a temp dir, removed on exit. SIGTERM/SIGINT, or
// the parent's end of stdin closing, stops both children.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { BENCH_CALLER, benchConfigRules, UPSTREAMS } from './gateway-rules.mjs';

const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const mode = arg('--mode') ?? 'gateway';
if (!['direct', 'gateway', 'full'].includes(mode)) {
  console.error(`gateway-stack: --mode must be direct, gateway or full, got ${mode}`);
  process.exit(2);
}
const port = arg('--port') ?? '0';
const root = resolve(arg('--root') ?? join(import.meta.dirname, '..', '..'));
const CLI = join(root, 'dist', 'cli', 'main.js');
/** The token the parent sends (bench-auth.mjs's BENCH_DEV_TOKEN), for the caller the 100-rule policy is written for. */
const DEV_TOKEN = 'bench-dev-token';

const dir = mkdtempSync(join(tmpdir(), `mrtr-bench-gw-${mode}-`));
const children = [];
let stopping = false;

/** Start `mrtr <args>` in the temp dir; resolve with the URL it prints once it listens. */
function startCli(label, args) {
  // Our node flags (MRTR_BENCH_SERVER_NODE_ARGS, e.g. --cpu-prof) are the servers' too: they are what is measured.
  const child = spawn(process.execPath, [...process.execArgv, CLI, ...args], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  // Its lines go to our stderr, labelled; never to stdout, where the parent waits for our one ready line.
  child.stderr.on('data', (chunk) => process.stderr.write(`[${label}] ${chunk}`));
  child.once('exit', (code, signal) => {
    if (stopping) return;
    console.error(`gateway-stack: ${label} exited (code ${code}, signal ${signal}); stopping`);
    stop(1);
  });
  return new Promise((ready) => {
    let out = '';
    const onData = (chunk) => {
      out += chunk;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (!m) return;
      child.stdout.off('data', onData);
      child.stdout.resume(); // keep draining: a full pipe would stall the child
      ready(m[1]);
    };
    child.stdout.on('data', onData);
  });
}

function stop(code) {
  if (stopping) return;
  stopping = true;
  const exits = children
    .filter((c) => c.exitCode === null && c.signalCode === null)
    .map((c) => new Promise((done) => c.once('exit', done)));
  for (const c of children) c.kill('SIGTERM');
  // Before the parent's own 3 s: the temp dir is removed only once both are gone.
  const force = setTimeout(() => {
    for (const c of children) c.kill('SIGKILL');
  }, 2500);
  Promise.all(exits).then(() => {
    clearTimeout(force);
    process.exit(code); // the temp dir goes on exit
  });
}
// Once the parent is gone our pipes are broken: a write must not crash us before the children are stopped.
process.stdout.on('error', () => {});
process.stderr.on('error', () => {});
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
process.on('SIGTERM', () => stop(0));
process.on('SIGINT', () => stop(0));
// The parent gives us a pipe on stdin and never writes to it: its end closing means the parent is gone.
process.stdin.on('end', () => stop(0));
process.stdin.on('error', () => stop(0));
process.stdin.resume();

// A stopped server waits for requests in progress; the load has ended by then, so a second is plenty.
const DRAIN = ['--drain-ms', '1000'];
const upstreamArgs = ['serve', '--fixture', 'example', '--port', mode === 'direct' ? port : '0', ...DRAIN];
const upstreamUrl = await startCli('upstream', upstreamArgs);
if (mode === 'direct') {
  console.log(`listening on ${upstreamUrl}`);
} else {
  const names = mode === 'full' ? UPSTREAMS : ['up'];
  const rules = mode === 'full' ? benchConfigRules() : [{ tools: ['up/*'], roles: ['*'] }];
  const config = join(dir, 'gateway.yaml');
  writeFileSync(config, stringify({ upstreams: names.map((name) => ({ name, url: upstreamUrl })), rules }));
  const { subject: sub, roles, scopes } = BENCH_CALLER;
  writeFileSync(join(dir, 'tokens.json'), JSON.stringify({ [DEV_TOKEN]: { sub, roles, scopes } }));
  const controls =
    mode === 'full'
      ? [
          '--store',
          `sqlite:${join(dir, 'replay.db')}`,
          '--audit',
          `sqlite:${join(dir, 'audit.db')}`,
          '--audit-key-file',
          join(dir, 'audit-key'),
        ]
      : [];
  const gatewayUrl = await startCli('gateway', [
    'gateway',
    '--config',
    config,
    '--port',
    port,
    '--tokens',
    join(dir, 'tokens.json'),
    ...DRAIN,
    ...controls,
  ]);
  console.log(`listening on ${gatewayUrl}`);
}
