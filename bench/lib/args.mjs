// Command-line flags for bench/flows.mjs.
import { GATEWAY_ROW_NAMES } from './gateway-rows.mjs';

/** The table's gateway rows: a one-round echo call straight to mrtr's example server, through `mrtr gateway`, and
 * through it with every control on. Together with them, the policy's µs per decision (bench/gateway-policy.mjs) is
 * printed. `--gateway` runs the side-by-side comparison instead (lib/gateway-rows.mjs). */
export const GATEWAY_NAMES = ['gw-direct', 'gw-gateway', 'gw-gateway-full'];

/** Ours, then ours with each optional part switched on (a variant is reported as a ratio to ours), then peers. */
export const SERVER_NAMES = [
  'ours',
  'ours-guard-memory',
  'ours-guard-sqlite',
  'ours-guard-redis',
  'ours-auth-dev',
  'ours-auth-jwt',
  'ours-auth-jwt-uncached',
  'ours-audit-sqlite',
  'ours-audit-sqlite-full',
  'ours-audit-postgres',
  'ours-full',
  'ours-tracing',
  'sdk',
  'bridge-2025',
  'sdk-stateful-2025',
  'bare',
  ...GATEWAY_NAMES,
];
/** The sweeps of `--curves` (lib/curves.mjs), in run order. */
export const CURVE_SWEEPS = ['questions', 'args', 'concurrency'];

/** Run order when --baseline adds an earlier build of ours: right after ours, so the two share conditions. */
const RUN_ORDER = [
  'ours',
  'baseline',
  ...SERVER_NAMES.filter((s) => s !== 'ours').flatMap((s) =>
    s === 'ours-full' ? [s, 'baseline-full'] : [s],
  ),
];

export const USAGE = `usage: node bench/flows.mjs [flags]
  --seconds N       measured window per server, seconds (default 10)
  --warmup N        warm-up before the window, seconds (default 3)
  --concurrency N   closed-loop concurrent flows / requests (default 32)
  --only LIST       comma-separated subset of: ours,ours-guard-memory,
                    ours-guard-sqlite,ours-guard-redis,ours-auth-dev,
                    ours-auth-jwt,ours-auth-jwt-uncached,ours-audit-sqlite,
                    ours-audit-sqlite-full,ours-audit-postgres,ours-full,
                    ours-tracing,sdk,
                    bridge-2025,sdk-stateful-2025,bare,gw-direct,gw-gateway,
                    gw-gateway-full (default all; the 2025 rows drive the same
                    flow as a 2025 client: session, SSE, elicitation/create
                    answered by POST; the gw-* rows are a one-round echo call
                    straight to an upstream and through mrtr gateway)
  --tracing         only ours and ours-tracing, side by side: the same flow
                    with tracing off (no SDK) and on (the SDK at 100 %
                    sampling, spans sent to a local OTLP receiver); prints
                    the CPU per flow ratio against its goal (≤ 1.15)
  --together        with --tracing: tracing off, on and off again served at
                    once on the same CPU, each under its own load, over the
                    same windows (--repeat passes, at least 3); a busy machine
                    slows all three alike, so their ratio holds; prints each
                    pass and the median and spread of on ÷ off
  --gateway         instead of the table: mrtr gateway side by side with
                    mcp-proxy and supergateway in front of the same stdio
                    server, and an SDK server straight and through the gateway
                    (lib/gateway-compare.mjs), each at every --callers count;
                    the gateway's goals, met or not; the policy's µs per
                    decision; writes bench/results/gateway-*.json
  --callers LIST    --gateway: comma-separated concurrent callers (default 1,32)
  --gateway-rows LIST  --gateway: a subset of ${GATEWAY_ROW_NAMES.slice(0, 3).join(',')},
                    ${GATEWAY_ROW_NAMES.slice(3, 6).join(',')},
                    ${GATEWAY_ROW_NAMES.slice(6).join(',')} (implies --gateway)
  --client KIND     load-generator HTTP client: raw (default; lean keep-alive
                    sockets) or node (node:http Agent; generator-bound near 14k req/s)
  --quiet-wait N    before each server, wait up to N s for the machine to be
                    idle (< 0.25 cores busy) (default 60; 0 = don't wait)
  --retries N       re-measure a server up to N more times when its window was
                    disturbed by other processes (default 2); the least
                    disturbed attempt is reported
  --repeat N        N interleaved passes over the servers; each server is
                    reported by its median pass (default 1)
  --baseline DIR    also measure an earlier build of mrtr (DIR/dist/cli/main.js,
                    e.g. a git worktree of main after \`npm run build\`) beside
                    ours, and report ours / baseline: a change to the hot path
                    is judged against the code it replaces, in the same run
  --pin / --no-pin  the server child on one CPU, this load generator on
                    another (taskset), so a row's server CPU per flow is its
                    own (default: pinned when taskset exists and 2 CPUs are
                    allowed; --pin fails when it cannot pin)
  --curves          instead of the table: cost as work grows (lib/curves.mjs):
                    flows/s and server µs per flow against questions per flow,
                    argument size and concurrency; writes
                    docs/images/bench-curves.svg and bench/results/curves-*.json
  --curves-seconds N  measured window per point, seconds (default 3)
  --curves-warmup N   warm-up before each point, seconds (default 1)
  --curves-only LIST  comma-separated subset of: questions,args,concurrency
  --no-json         do not write bench/results/flows-<timestamp>.json
  --verbose         echo server child stderr/stdout
  -h, --help        this text`;

export function parseArgs(argv) {
  const opts = {
    seconds: 10,
    warmup: 3,
    concurrency: 32,
    only: [...SERVER_NAMES],
    json: true,
    verbose: false,
    client: 'raw',
    quietWait: 60,
    retries: 2,
    repeat: 1,
    pin: 'auto',
    curves: false,
    curvesSeconds: 3,
    curvesWarmup: 1,
    curvesOnly: [...CURVE_SWEEPS],
    gateway: false,
    together: false,
    callers: [1, 32],
    gatewayRows: [...GATEWAY_ROW_NAMES],
  };
  const num = (flag, v, min) => {
    const n = Number(v);
    if (v === undefined || !Number.isFinite(n) || n < min)
      throw new Error(`${flag} needs a number >= ${min}, got ${v}`);
    return n;
  };
  const commaList = (flag, v) => {
    const list = String(v ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (!list.length) throw new Error(`${flag} needs a comma-separated list`);
    return list;
  };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let v;
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0) {
      v = a.slice(eq + 1);
      a = a.slice(0, eq);
    }
    const next = () => (v !== undefined ? v : argv[++i]);
    switch (a) {
      case '--seconds':
        opts.seconds = num(a, next(), 0.1);
        break;
      case '--warmup':
        opts.warmup = num(a, next(), 0);
        break;
      case '--concurrency':
        opts.concurrency = Math.floor(num(a, next(), 1));
        break;
      case '--only': {
        const list = String(next() ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        for (const s of list)
          if (!SERVER_NAMES.includes(s))
            throw new Error(`--only: unknown server "${s}" (known: ${SERVER_NAMES.join(',')})`);
        if (!list.length) throw new Error('--only needs at least one server');
        opts.only = SERVER_NAMES.filter((s) => list.includes(s));
        break;
      }
      case '--gateway':
        opts.gateway = true;
        break;
      case '--tracing':
        opts.only = ['ours', 'ours-tracing'];
        break;
      case '--together':
        opts.together = true;
        opts.only = ['ours', 'ours-tracing'];
        break;
      case '--callers': {
        const list = commaList(a, next()).map((c) => Math.floor(num(a, c, 1)));
        opts.callers = [...new Set(list)].sort((x, y) => x - y);
        break;
      }
      case '--gateway-rows': {
        const list = commaList(a, next());
        for (const s of list)
          if (!GATEWAY_ROW_NAMES.includes(s))
            throw new Error(`--gateway-rows: unknown row "${s}" (known: ${GATEWAY_ROW_NAMES.join(',')})`);
        opts.gateway = true;
        opts.gatewayRows = GATEWAY_ROW_NAMES.filter((s) => list.includes(s));
        break;
      }
      case '--client': {
        const c = String(next() ?? '');
        if (c !== 'raw' && c !== 'node') throw new Error(`--client must be raw or node, got "${c}"`);
        opts.client = c;
        break;
      }
      case '--quiet-wait':
        opts.quietWait = num(a, next(), 0);
        break;
      case '--retries':
        opts.retries = Math.floor(num(a, next(), 0));
        break;
      case '--repeat':
        opts.repeat = Math.floor(num(a, next(), 1));
        break;
      case '--baseline':
        opts.baseline = String(next() ?? '');
        if (!opts.baseline) throw new Error('--baseline needs a directory');
        break;
      case '--pin':
        opts.pin = true;
        break;
      case '--no-pin':
        opts.pin = false;
        break;
      case '--curves':
        opts.curves = true;
        break;
      case '--curves-seconds':
        opts.curvesSeconds = num(a, next(), 0.1);
        break;
      case '--curves-warmup':
        opts.curvesWarmup = num(a, next(), 0);
        break;
      case '--curves-only': {
        const list = String(next() ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        for (const s of list)
          if (!CURVE_SWEEPS.includes(s))
            throw new Error(`--curves-only: unknown sweep "${s}" (known: ${CURVE_SWEEPS.join(',')})`);
        if (!list.length) throw new Error('--curves-only needs at least one sweep');
        opts.curves = true;
        opts.curvesOnly = CURVE_SWEEPS.filter((s) => list.includes(s));
        break;
      }
      case '--no-json':
        opts.json = false;
        break;
      case '--verbose':
        opts.verbose = true;
        break;
      case '-h':
      case '--help':
        opts.help = true;
        break;
      default:
        throw new Error(`unknown flag ${a}`);
    }
  }
  // The earlier build beside ours, and beside the full stack when that row runs.
  if (opts.baseline)
    opts.only = RUN_ORDER.filter(
      (s) =>
        s === 'baseline' ||
        (s === 'baseline-full' && opts.only.includes('ours-full')) ||
        opts.only.includes(s),
    );
  return opts;
}
