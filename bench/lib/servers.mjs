// Spawning the benchmarked servers as child processes, waiting for their
// ready line, sampling their memory/CPU from /proc, and stopping them.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { BENCH_DEV_TOKEN, benchJwt } from './bench-auth.mjs';
import { serverCommand } from './pinning.mjs';
import { processTree, readCpuTicks, readStatus, USER_HZ } from './proc.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = join(here, '..', '..');
/** What `ours` runs on: lib/ours-server.mjs imports the built server, so its presence (and mtime) stands for the build. */
export const OURS_ENTRY = join(REPO_ROOT, 'dist', 'server', 'index.js');

let baselineDir = '';
/** Where server children run (pinning.mjs pinPlan); unpinned until `usePinning`. */
let pinning;
export function usePinning(plan) {
  pinning = plan;
}
/** Where the tracing row sends its spans: the bench's own OTLP receiver (lib/otlp-sink.mjs). */
let otlpUrl = '';
export function useOtlpSink(url) {
  otlpUrl = url;
}
/** Where `--baseline` points: an earlier checkout of this repository, built. */
export function useBaseline(dir) {
  baselineDir = dir;
}
/** What the gateway rows run: the built CLI (`mrtr serve`, `mrtr gateway`). */
export const CLI_ENTRY = join(REPO_ROOT, 'dist', 'cli', 'main.js');

const baselineEntry = () => join(baselineDir, 'dist', 'server', 'index.js');

/** The servers, in run order (baseline only with --baseline). */
export const SERVER_DEFS = {
  ours: {
    label: 'ours (mrtr)',
    kind: 'mrtr',
    args: (port) => [join(here, 'ours-server.mjs'), '--port', String(port)],
    missing: () => (existsSync(OURS_ENTRY) ? null : `${OURS_ENTRY} not found (run \`npm run build\` first)`),
  },
  // The replay guard on each store: what single-use requestState costs per flow.
  ...Object.fromEntries(
    ['memory', 'sqlite', 'redis'].map((store) => [
      `ours-guard-${store}`,
      {
        label: `ours + replay guard (${store})`,
        kind: 'mrtr',
        variantOf: 'ours',
        args: (port) => [join(here, 'ours-server.mjs'), '--port', String(port), '--store', store],
        missing: () =>
          existsSync(OURS_ENTRY) ? null : `${OURS_ENTRY} not found (run \`npm run build\` first)`,
      },
    ]),
  ),
  // Bearer-token auth on every request: a development token, a JWT (signature remembered per token), a JWT whose
  // signature is checked on every request.
  ...Object.fromEntries(
    [
      ['dev', 'development token'],
      ['jwt', 'JWT, cached verification'],
      ['jwt-uncached', 'JWT, every signature checked'],
    ].map(([kind, what]) => [
      `ours-auth-${kind}`,
      {
        label: `ours + auth (${what})`,
        kind: 'mrtr',
        variantOf: 'ours',
        args: (port) => [join(here, 'ours-server.mjs'), '--port', String(port), '--auth', kind],
        auth: kind,
        missing: () =>
          existsSync(OURS_ENTRY) ? null : `${OURS_ENTRY} not found (run \`npm run build\` first)`,
      },
    ]),
  ),
  // The configuration `npm start` serves: every control that needs no person, on the embedded stores.
  'ours-full': {
    label: 'ours, full stack (dev token, sqlite replay + audit)',
    kind: 'mrtr',
    variantOf: 'ours',
    args: (port) => [
      join(here, 'ours-server.mjs'),
      '--port',
      String(port),
      '--auth',
      'dev',
      '--store',
      'sqlite',
      '--audit',
      'sqlite',
    ],
    auth: 'dev',
    missing: () => (existsSync(OURS_ENTRY) ? null : `${OURS_ENTRY} not found (run \`npm run build\` first)`),
  },
  // The audit trail on each durable sink: what "intent before the tool, outcome before the answer" costs per flow
  // (2 rounds, 4 events per flow).
  ...Object.fromEntries(
    ['sqlite', 'sqlite-full', 'postgres'].map((sink) => [
      `ours-audit-${sink}`,
      {
        label: `ours + audit (${sink === 'sqlite-full' ? 'sqlite, fsync' : sink})`,
        kind: 'mrtr',
        variantOf: 'ours',
        args: (port) => [join(here, 'ours-server.mjs'), '--port', String(port), '--audit', sink],
        missing: () =>
          existsSync(OURS_ENTRY) ? null : `${OURS_ENTRY} not found (run \`npm run build\` first)`,
      },
    ]),
  ),
  // The OpenTelemetry Node SDK registered as `mrtr serve` registers it, sampling every round (100 %), exporting each
  // span over OTLP/HTTP JSON to a receiver in the bench process: what tracing on costs per flow (goal ≤ 1.15× ours).
  'ours-tracing': {
    label: 'ours + tracing (100 %, OTLP)',
    kind: 'mrtr',
    variantOf: 'ours',
    tracing: true,
    args: (port) => [join(here, 'ours-server.mjs'), '--port', String(port), '--tracing', otlpUrl],
    missing: () => (existsSync(OURS_ENTRY) ? null : `${OURS_ENTRY} not found (run \`npm run build\` first)`),
  },
  sdk: {
    label: 'sdk 2.4.0',
    kind: 'mrtr',
    args: (port) => [join(here, 'sdk-server.mjs'), '--port', String(port)],
    missing: () => null,
  },
  // The same flow driven by a 2025 client (initialize, Mcp-Session-Id, the question as a server-to-client
  // elicitation/create on the call's SSE stream, the answer POSTed): through mrtr's bridge, and the SDK stateful.
  'bridge-2025': {
    label: 'ours, 2025 client (bridge)',
    kind: 'legacy',
    args: (port) => [join(here, 'ours-server.mjs'), '--port', String(port)],
    missing: () => (existsSync(OURS_ENTRY) ? null : `${OURS_ENTRY} not found (run \`npm run build\` first)`),
  },
  'sdk-stateful-2025': {
    label: 'sdk 2.4.0 stateful, 2025 client',
    kind: 'legacy',
    args: (port) => [join(here, 'sdk-stateful-server.mjs'), '--port', String(port)],
    missing: () => null,
  },
  baseline: {
    label: 'baseline (earlier mrtr)',
    kind: 'mrtr',
    args: (port) => [join(here, 'ours-server.mjs'), '--port', String(port), '--root', baselineDir],
    missing: () =>
      existsSync(baselineEntry()) ? null : `${baselineEntry()} not found (build the baseline first)`,
  },
  // The full stack on the earlier build: what the change costs with every control on, not only bare.
  'baseline-full': {
    label: 'baseline, full stack (earlier mrtr)',
    kind: 'mrtr',
    args: (port) => [...SERVER_DEFS['ours-full'].args(port), '--root', baselineDir],
    auth: 'dev',
    missing: () =>
      existsSync(baselineEntry()) ? null : `${baselineEntry()} not found (build the baseline first)`,
  },
  // A one-round pass-through tools/call (the example server's echo), straight to the upstream and through
  // `mrtr gateway` in front of it: what the gateway adds. Each row runs bench/lib/gateway-stack.mjs, which starts the
  // upstream and the gateway as processes of their own; its CPU and memory are summed over them.
  ...Object.fromEntries(
    [
      ['gw-direct', 'none', 'echo, straight to the upstream', 'echo', undefined],
      ['gw-gateway', 'gateway', 'echo via gateway (1 rule, dev token)', 'up__echo', 'dev'],
      ['gw-gateway-full', 'full', 'echo via gateway (100 rules, sqlite replay+audit)', 'up0__echo', 'dev'],
    ].map(([name, front, label, tool, auth]) => [
      name,
      {
        label,
        kind: 'call',
        tool,
        auth,
        args: (port) => [
          join(here, 'gateway-stack.mjs'),
          '--port',
          String(port),
          '--upstream',
          'example',
          '--front',
          front,
        ],
        // Two CLI processes start one after the other (the gateway lists the upstream's tools first).
        readyTimeoutMs: 60_000,
        // The launcher stops its children when its stdin closes; its process group is killed if we die abruptly.
        processGroup: true,
        missing: () =>
          existsSync(CLI_ENTRY) ? null : `${CLI_ENTRY} not found (run \`npm run build\` first)`,
      },
    ]),
  ),
  bare: {
    label: 'bare node:http',
    kind: 'bare',
    args: (port) => [join(here, 'bare-server.mjs'), '--port', String(port)],
    missing: () => null,
  },
};

/** The commit measured, for the JSON result files. */
export function gitCommit() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
  } catch {
    return null;
  }
}

/** The Authorization header a server's requests carry (auth rows only). */
export async function authHeaders(name) {
  const kind = SERVER_DEFS[name].auth;
  if (!kind) return undefined;
  return { authorization: `Bearer ${kind === 'dev' ? BENCH_DEV_TOKEN : (await benchJwt()).token}` };
}

/** Reserve an ephemeral 127.0.0.1 port (bind to 0, read it back, release it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const READY_RE = /listening on (https?:\/\/[^\s]+)/;
/** What a launcher of several processes says about them before its ready line (lib/gateway-stack.mjs). */
const INFO_RE = /bench-info (\{.*\})$/m;

/**
 * Start a server child and resolve once it prints `listening on <url>`. `def` defaults to the row `name` of
 * SERVER_DEFS; the gateway comparison (lib/gateway-compare.mjs) brings its own.
 * @returns {Promise<{child, pid, url, info, stderrTail: () => string, stop: () => Promise<void>}>}
 */
export async function startServer(
  name,
  { verbose = false, readyTimeoutMs: defaultReadyMs = 20_000, def = SERVER_DEFS[name] } = {},
) {
  const readyTimeoutMs = def.readyTimeoutMs ?? defaultReadyMs;
  const port = await freePort();
  // MRTR_BENCH_SERVER_NODE_ARGS: node flags for the server children only, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p"
  // to profile a server under the benchmark's load (node refuses --cpu-prof in NODE_OPTIONS).
  const nodeArgs = (process.env.MRTR_BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const authEnv = def.auth?.startsWith('jwt') ? { MRTR_BENCH_JWK: (await benchJwt()).jwk } : {};
  // Pinned: taskset execs node, so the child's pid is the server's own.
  const [command, argv] = serverCommand(pinning, [...nodeArgs, ...def.args(port)]);
  const child = spawn(command, argv, {
    cwd: REPO_ROOT,
    // A launcher of several processes (processGroup) watches its stdin: our end closing means we are gone.
    stdio: [def.processGroup ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    detached: def.processGroup === true,
    env: { ...process.env, NODE_ENV: process.env.NODE_ENV ?? 'production', ...authEnv },
  });
  /** Kill at once (on our own exit): the whole process group of a launcher, else the child. */
  const killNow = () => {
    try {
      if (def.processGroup) process.kill(-child.pid, 'SIGKILL');
      else child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  };
  let tail = '';
  const keep = (chunk) => {
    tail = (tail + chunk).slice(-4000);
  };
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let alive = true;
  exited.then(() => {
    alive = false;
  });

  let info;
  const url = await new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => {
      killNow();
      reject(
        new Error(
          `${name}: no "listening on" line within ${readyTimeoutMs} ms; output: ${tail.trim() || '(none)'}`,
        ),
      );
    }, readyTimeoutMs);
    const onData = (stream) => (chunk) => {
      const s = chunk.toString();
      keep(s);
      if (verbose) process.stderr.write(`[${name} ${stream}] ${s}`);
      buf += s;
      const m = READY_RE.exec(buf);
      if (m) {
        const said = INFO_RE.exec(buf.slice(0, m.index));
        if (said) info = JSON.parse(said[1]);
        clearTimeout(timer);
        const printed = new URL(m[1]);
        // Trust the printed URL unless it says port 0; fall back to the port we passed.
        if (printed.port === '' || printed.port === '0') printed.port = String(port);
        resolve(printed.href);
        buf = '';
      }
    };
    child.stdout.on('data', onData('stdout'));
    child.stderr.on('data', onData('stderr'));
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      killNow(); // a launcher's children, if any outlived it
      reject(
        new Error(
          `${name}: exited before ready (code ${code}, signal ${signal}); output: ${tail.trim() || '(none)'}`,
        ),
      );
    });
  });

  async function stop() {
    if (!alive) return;
    child.kill('SIGTERM');
    const t = setTimeout(killNow, 3000);
    await exited;
    clearTimeout(t);
  }
  return {
    child,
    pid: child.pid,
    url,
    info,
    isAlive: () => alive,
    stderrTail: () => tail,
    exited,
    stop,
    killNow,
  };
}

// ---------- /proc sampling ----------

/**
 * Machine-wide CPU seconds by category (summed over cores), from /proc/stat:
 * `task` = user+nice+system (time charged to processes), `irq` = irq+softirq
 * (mostly the loopback network stack, charged to no process), `steal`.
 */
export function machineCpuSeconds() {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal guest guest_nice
    return {
      task: (f[0] + f[1] + f[2]) / USER_HZ,
      irq: (f[5] + f[6]) / USER_HZ,
      steal: f[7] / USER_HZ,
    };
  } catch {
    return { task: Number.NaN, irq: Number.NaN, steal: Number.NaN };
  }
}

/**
 * Wait until the machine is quiet (busy < `threshold` cores over a 1 s
 * sample), at most `maxWaitMs`. Returns the last busy figure and the wait.
 */
export async function waitForQuiet({ threshold = 0.25, maxWaitMs = 60_000, onWait } = {}) {
  const t0 = Date.now();
  let told = false;
  for (;;) {
    const a = machineCpuSeconds();
    await new Promise((r) => setTimeout(r, 1000));
    const b = machineCpuSeconds();
    const busy = b.task - a.task + (b.irq - a.irq) + (b.steal - a.steal);
    const waited = Date.now() - t0;
    if (!(busy >= threshold) || waited >= maxWaitMs)
      return { busy, waitedMs: waited, quiet: !(busy >= threshold) };
    if (!told) {
      onWait?.(busy);
      told = true;
    }
  }
}

/**
 * The marks of one measured window (`mark('start')`, `mark('end')`) and the CPU each party used between them, in
 * cores: the server tree, this load generator, every other process (a concurrent build, say), kernel irq/softirq
 * (mostly the loopback network stack, charged to no process) and hypervisor steal.
 */
export function cpuWindow(sampler) {
  const marks = {};
  return {
    marks,
    mark(k) {
      marks[k] = {
        t: performance.now(),
        srv: sampler.cpuSeconds(),
        gen: process.cpuUsage(),
        sys: machineCpuSeconds(),
      };
    },
    cpu() {
      const { start, end } = marks;
      const elapsed = (end.t - start.t) / 1000;
      const serverCpu = (end.srv - start.srv) / elapsed;
      const generatorCpu =
        (end.gen.user + end.gen.system - (start.gen.user + start.gen.system)) / 1e6 / elapsed;
      const d = (k) => (end.sys[k] - start.sys[k]) / elapsed;
      const otherCpu = Math.max(0, d('task') - serverCpu - generatorCpu);
      return { elapsed, serverCpu, generatorCpu, otherCpu, irqCpu: d('irq'), stealCpu: d('steal') };
    },
  };
}

/**
 * Periodically sample RSS (VmRSS, summed over the process tree) and VmHWM.
 * `cpuMark()` returns cumulative CPU seconds of the tree, for deltas.
 */
export function createSampler(rootPid, intervalMs = 250) {
  let pids = processTree(rootPid);
  let peakRssKb = 0;
  let peakHwmKb = 0;
  const lastTicks = new Map();
  const sample = () => {
    let rss = 0;
    let hwm = 0;
    for (const pid of pids) {
      const st = readStatus(pid);
      if (st) {
        rss += st.rssKb;
        hwm += st.hwmKb;
      }
    }
    if (rss > peakRssKb) peakRssKb = rss;
    if (hwm > peakHwmKb) peakHwmKb = hwm;
    return rss;
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  timer.unref();
  return {
    refreshTree() {
      pids = processTree(rootPid);
      return pids.length;
    },
    cpuSeconds() {
      let t = 0;
      for (const pid of pids) {
        const ticks = readCpuTicks(pid);
        if (ticks !== null) lastTicks.set(pid, ticks); // keep the last reading of a process that exited
        t += lastTicks.get(pid) ?? 0;
      }
      return t / USER_HZ;
    },
    resetPeak() {
      peakRssKb = 0;
      sample();
    },
    stop() {
      sample();
      clearInterval(timer);
      return { peakRssMiB: peakRssKb / 1024, peakHwmMiB: peakHwmKb / 1024, processes: pids.length };
    },
  };
}
