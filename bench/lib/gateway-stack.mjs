// Child process for the gateway rows of `npm run bench`: starts an upstream and, in front of it, a gateway or proxy,
// each its own process, and prints `listening on <url>` for the parent (the front's URL, or the upstream's when there
// is no front). Before it, one line `bench-info {json}`: the front's pid and the upstream's (so the parent can tell the
// front's own CPU from the upstream's), the upstream's request counter, and the file a stdio call reads.
//
// Usage: node bench/lib/gateway-stack.mjs --port P --upstream example|sdk|sdk2025|fs
//          --front none|gateway|full|mcp-proxy|supergateway
//   upstreams  example: `mrtr serve --fixture example` (tool `echo`); sdk: bench/lib/sdk-server.mjs --echo, the
//              official SDK 2.4.0, 2026-07-28 (tool `echo`, requests counted); sdk2025: bench/lib/sdk-2025-server.mjs,
//              the official SDK 1.x, 2025-11-25 (the same); fs: the official filesystem server over stdio, started by
//              the front (tool `read_text_file`)
//   fronts     none: the upstream alone (not for fs); gateway: `mrtr gateway`, one upstream `up`, one rule letting
//              every signed-in caller call every tool, dev tokens; full: `mrtr gateway` with the 100 rules of
//              lib/gateway-rules.mjs over ten upstream names (up0 … up9, all the same server), dev tokens, a SQLite
//              replay store and a SQLite audit trail; mcp-proxy, supergateway: the proxies (fs only), as installed
// Everything written (config, tokens, the share, databases) goes to a temp dir, removed on exit. SIGTERM/SIGINT, or
// the parent's end of stdin closing, stops every process this launcher started, and their children.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { BENCH_CALLER, benchConfigRules, UPSTREAMS } from './gateway-rules.mjs';
import { processTree } from './proc.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const upstream = arg('--upstream', 'example');
const front = arg('--front', 'gateway');
const FRONTS = ['none', 'gateway', 'full', 'mcp-proxy', 'supergateway'];
const problem = !['example', 'sdk', 'sdk2025', 'fs'].includes(upstream)
  ? `--upstream must be example, sdk, sdk2025 or fs, got ${upstream}`
  : !FRONTS.includes(front)
    ? `--front must be one of ${FRONTS.join(', ')}, got ${front}`
    : upstream === 'fs' && front === 'none'
      ? 'a stdio upstream needs a front'
      : upstream !== 'fs' && (front === 'mcp-proxy' || front === 'supergateway')
        ? `${front} is measured in front of the stdio upstream only`
        : undefined;
if (problem) {
  console.error(`gateway-stack: ${problem}`);
  process.exit(2);
}
const port = arg('--port', '0');
const root = resolve(arg('--root', join(import.meta.dirname, '..', '..')));
const modules = join(root, 'node_modules');
const CLI = join(root, 'dist', 'cli', 'main.js');
const FILESYSTEM = join(modules, '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
const MCP_PROXY = join(modules, 'mcp-proxy', 'dist', 'bin', 'mcp-proxy.mjs');
const SUPERGATEWAY = join(modules, 'supergateway', 'dist', 'index.js');
/** The token the parent sends (bench-auth.mjs's BENCH_DEV_TOKEN), for the caller the 100-rule policy is written for. */
const DEV_TOKEN = 'bench-dev-token';
/** What the stdio rows read, every call: a small file of the share. */
const FILE_TEXT = 'hello from the share';

const dir = mkdtempSync(join(tmpdir(), `mrtr-bench-gw-${upstream}-${front}-`));
const children = [];
let stopping = false;

/**
 * Start a process (in the temp dir unless `cwd`); resolve once every pattern of `ready` (`{ stdout?, stderr? }`) has
 * shown in its output, with the first pattern's match. Its stderr goes to ours, labelled; never to our stdout, where
 * the parent waits.
 */
function startChild(label, command, args, { cwd = dir, ready = {} } = {}) {
  const child = spawn(command, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  child.stdin.on('error', () => {}); // a stdio proxy's child may close it first
  child.stderr.on('data', (chunk) => process.stderr.write(`[${label}] ${chunk}`));
  child.once('exit', (code, signal) => {
    if (stopping) return;
    console.error(`gateway-stack: ${label} exited (code ${code}, signal ${signal}); stopping`);
    stop(1);
  });
  const waits = Object.entries(ready).map(
    ([stream, pattern]) =>
      new Promise((done) => {
        let seen = '';
        const onData = (chunk) => {
          seen += chunk;
          const m = pattern.exec(seen);
          if (!m) return;
          child[stream].off('data', onData);
          done(m);
        };
        child[stream].on('data', onData);
      }),
  );
  child.stdout.resume(); // keep draining: a full pipe would stall the child
  return Promise.all(waits).then((matches) => ({ child, match: matches[0] }));
}

/** Resolve once something accepts connections on the port (a proxy that prints no ready line of its own). */
async function listening(portNumber) {
  for (let i = 0; i < 300; i++) {
    const ok = await new Promise((done) => {
      const s = net.connect({ host: '127.0.0.1', port: Number(portNumber) }, () => {
        s.destroy();
        done(true);
      });
      s.on('error', () => done(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on port ${portNumber} after 30 s`);
}

function stop(code) {
  if (stopping) return;
  stopping = true;
  // Everything below us, now: a proxy's stdio children may sit in process groups of their own.
  const tree = processTree(process.pid).filter((pid) => pid !== process.pid);
  const exits = children
    .filter((c) => c.exitCode === null && c.signalCode === null)
    .map((c) => new Promise((done) => c.once('exit', done)));
  for (const c of children) c.kill('SIGTERM');
  const killRest = () => {
    for (const pid of tree) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone already */
      }
    }
  };
  // Before the parent's own 3 s: the temp dir is removed only once they are gone.
  const force = setTimeout(killRest, 2500);
  Promise.all(exits).then(() => {
    clearTimeout(force);
    killRest(); // what the fronts left behind
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

// Our node flags (MRTR_BENCH_SERVER_NODE_ARGS, e.g. --cpu-prof) are the measured processes' too.
const node = (script, args) => [process.execPath, [...process.execArgv, script, ...args]];
const LISTENING = { stdout: /listening on (http:\/\/\S+)/ };
// A stopped server waits for requests in progress; the load has ended by then, so a second is plenty.
const DRAIN = ['--drain-ms', '1000'];

/** The upstream: a URL to reach it, its pid, its counter; or, for stdio, the command a front starts. */
async function startUpstream() {
  if (upstream === 'fs') {
    const share = join(dir, 'share');
    mkdirSync(share);
    writeFileSync(join(share, 'hello.txt'), FILE_TEXT);
    return {
      command: [process.execPath, FILESYSTEM, share],
      cwd: share,
      call: { path: join(share, 'hello.txt'), text: FILE_TEXT },
    };
  }
  const at = front === 'none' ? port : '0';
  const [command, args] =
    upstream === 'sdk'
      ? node(join(import.meta.dirname, 'sdk-server.mjs'), ['--port', at, '--echo'])
      : upstream === 'sdk2025'
        ? node(join(import.meta.dirname, 'sdk-2025-server.mjs'), ['--port', at])
        : node(CLI, ['serve', '--fixture', 'example', '--port', at, ...DRAIN]);
  const { child, match } = await startChild('upstream', command, args, { ready: LISTENING });
  const url = match[1];
  return {
    url,
    pid: child.pid,
    count: upstream === 'example' ? undefined : new URL('/bench-count', url).href,
  };
}

/** `mrtr gateway` with one rule, or with every control that needs no person. */
async function startGateway(up) {
  const names = front === 'full' ? UPSTREAMS : ['up'];
  const rules = front === 'full' ? benchConfigRules() : [{ tools: ['up/*'], roles: ['*'] }];
  const where = up.url ? { url: up.url } : { command: up.command, cwd: up.cwd };
  const config = join(dir, 'gateway.yaml');
  writeFileSync(config, stringify({ upstreams: names.map((name) => ({ name, ...where })), rules }));
  const { subject: sub, roles, scopes } = BENCH_CALLER;
  writeFileSync(join(dir, 'tokens.json'), JSON.stringify({ [DEV_TOKEN]: { sub, roles, scopes } }));
  const controls =
    front === 'full'
      ? [
          '--store',
          `sqlite:${join(dir, 'replay.db')}`,
          '--audit',
          `sqlite:${join(dir, 'audit.db')}`,
          '--audit-key-file',
          join(dir, 'audit-key'),
        ]
      : [];
  const [command, args] = node(CLI, [
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
  // Ready once it listens and every upstream has answered its first listing.
  const { child, match } = await startChild('gateway', command, args, {
    ready: { ...LISTENING, stderr: /upstreams started:/ },
  });
  return { url: match[1], pid: child.pid };
}

/** mcp-proxy or supergateway in front of the stdio upstream, as their READMEs start them (Streamable HTTP out). */
async function startProxy(up) {
  const [command, args] =
    front === 'mcp-proxy'
      ? node(MCP_PROXY, ['--port', port, '--host', '127.0.0.1', '--server', 'stream', '--', ...up.command])
      : // Stateful: a 2025 session keeps its stdio child (stateless starts one per request). Logging off: its
        // default level logs every message.
        node(SUPERGATEWAY, [
          '--stdio',
          up.command.map((a) => JSON.stringify(a)).join(' '),
          '--outputTransport',
          'streamableHttp',
          '--stateful',
          '--port',
          port,
          '--logLevel',
          'none',
        ]);
  const { child } = await startChild(front, command, args, { cwd: up.cwd });
  await listening(port);
  return { url: `http://127.0.0.1:${port}/mcp`, pid: child.pid };
}

const up = await startUpstream();
const served =
  front === 'none'
    ? { url: up.url, pid: undefined }
    : front === 'gateway' || front === 'full'
      ? await startGateway(up)
      : await startProxy(up);
const info = {
  front: served.pid ?? null,
  upstream: up.pid ?? null,
  count: up.count ?? null,
  call: up.call ?? null,
};
console.log(`bench-info ${JSON.stringify(info)}`);
console.log(`listening on ${served.url}`);
