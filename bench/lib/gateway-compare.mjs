// `npm run bench -- --gateway`: mrtr's gateway side by side with the pass-through proxies people install (mcp-proxy,
// supergateway) in front of the same stdio server, and an HTTP server on the official SDK called straight and through
// the gateway; each row at every --callers count, in interleaved passes (--repeat), each point its median pass. Prints
// the table and the issue's goals, met or not, and writes bench/results/gateway-<timestamp>.json.
import { existsSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { BENCH_DEV_TOKEN } from './bench-auth.mjs';
import { prepareCallers } from './gateway-callers.mjs';
import { measurePolicy, printPolicy } from './gateway-policy-run.mjs';
import { gatewayGoals, gatewayTable, goalLines, medianPoint } from './gateway-report.mjs';
import { GATEWAY_ROWS, signedIn, toolOf } from './gateway-rows.mjs';
import { measureWindow } from './gateway-window.mjs';
import { createRawClient } from './raw-client.mjs';
import { writeJson } from './report.mjs';
import { CLI_ENTRY, gitCommit, REPO_ROOT, startServer, waitForQuiet } from './servers.mjs';

const here = import.meta.dirname;
const installed = (path) => existsSync(join(REPO_ROOT, 'node_modules', path));

/** Why a row cannot run here, or null. */
function missing(row) {
  const cli = row.root ? join(row.root, 'dist', 'cli', 'main.js') : CLI_ENTRY;
  if (row.front === 'gateway' || row.front === 'full')
    if (!existsSync(cli)) return `${cli} not found (run \`npm run build\` first)`;
  if (row.upstream === 'fs' && !installed('@modelcontextprotocol/server-filesystem/dist/index.js'))
    return '@modelcontextprotocol/server-filesystem is not installed';
  if (row.front === 'mcp-proxy' && !installed('mcp-proxy/dist/bin/mcp-proxy.mjs'))
    return 'mcp-proxy is not installed';
  if (row.front === 'supergateway' && !installed('supergateway/dist/index.js'))
    return 'supergateway is not installed';
  return null;
}

/** The server definition lib/servers.mjs's startServer takes: the launcher with this row's upstream and front. */
const stackDef = (row) => ({
  label: row.label,
  args: (port) => [
    join(here, 'gateway-stack.mjs'),
    '--port',
    String(port),
    '--upstream',
    row.upstream,
    '--front',
    row.front,
    ...(row.root ? ['--root', row.root] : []),
  ],
  // Up to eleven processes start one after the other (the gateway with every control has ten stdio upstreams).
  readyTimeoutMs: 120_000,
  processGroup: true,
});

/** One pass of one row: start its stack, measure it at each callers count, stop it. */
async function passOf(row, opts, track) {
  let server;
  try {
    server = await startServer(row.name, { verbose: opts.verbose, def: stackDef(row) });
  } catch (e) {
    console.log(`  FAILED to start: ${e.message}`);
    return { failed: true, reason: e.message };
  }
  track(server);
  const sessions = [];
  const byCallers = {};
  try {
    for (const concurrency of opts.callers) {
      process.stdout.write(
        `  ${concurrency} caller(s): warm-up ${opts.warmup} s, measuring ${opts.seconds} s … `,
      );
      const client = createRawClient(server.url, concurrency);
      try {
        const { op } = await prepareCallers({
          era: row.era,
          tool: toolOf(row),
          url: server.url,
          post: client.post,
          auth: signedIn(row) ? { authorization: `Bearer ${BENCH_DEV_TOKEN}` } : undefined,
          call: server.info?.call ?? undefined,
          concurrency,
          sessions,
        });
        const p = await measureWindow({
          server,
          op,
          concurrency,
          warmupMs: opts.warmup * 1000,
          measureMs: opts.seconds * 1000,
        });
        byCallers[concurrency] = p;
        console.log(
          `${Math.round(p.callsPerSec)} calls/s, p50 ${p.latencyMs.p50.toFixed(2)} ms, front ${Math.round(p.frontUsPerCall)} µs/call, other CPU ${Math.round(p.otherCpu * 100)} %${p.errors ? `, ${p.errors} ERRORS: ${p.errorSamples[0]}` : ''}`,
        );
      } catch (e) {
        console.log(`FAILED: ${e.message}`);
        return { failed: true, reason: `${concurrency} caller(s): ${e.message}` };
      } finally {
        client.close();
      }
      if (!server.isAlive()) return { failed: true, reason: `died; output tail:\n${server.stderrTail()}` };
    }
    return { byCallers };
  } finally {
    await server.stop();
    track(undefined);
  }
}

/** With `--baseline DIR`: each gateway row gets a twin right after it, the same stack on DIR's build. */
function withBaseline(rows, dir) {
  if (!dir) return rows;
  return rows.flatMap((r) =>
    r.front === 'gateway' || r.front === 'full'
      ? [r, { ...r, name: `${r.name}@baseline`, label: `${r.label} (baseline)`, root: dir, twinOf: r.name }]
      : [r],
  );
}

/** The rows with each baseline twin moved before its row. */
function swapTwins(rows) {
  const out = [];
  for (const r of rows) {
    if (r.twinOf && out.at(-1)?.name === r.twinOf) out.splice(out.length - 1, 0, r);
    else out.push(r);
  }
  return out;
}

/** Ours ÷ baseline for each twin: the median over passes of each pass's ratio (both measured in the same pass). */
function printBaseline(rows, passes, callers) {
  const median = (xs) => {
    const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
    return s.length ? s[Math.floor((s.length - 1) / 2)] : Number.NaN;
  };
  console.log("\n=== ours ÷ baseline (median over passes of the pass's ratio; below 1 = ours spends less)");
  for (const twin of rows.filter((r) => r.twinOf)) {
    const ours = passes[twin.twinOf] ?? [];
    const base = passes[twin.name] ?? [];
    for (const n of callers) {
      const pairs = ours.map((p, i) => [p.byCallers[n], base[i]?.byCallers[n]]).filter(([a, b]) => a && b);
      const ratio = (f) => median(pairs.map(([a, b]) => f(a) / f(b))).toFixed(2);
      const figures = (f) => pairs.map(([a, b]) => `${Math.round(f(a))}/${Math.round(f(b))}`).join(' ');
      console.log(
        `  ${twin.twinOf}, ${n} caller(s): front µs/call ${ratio((p) => p.frontUsPerCall)} (${figures((p) => p.frontUsPerCall)}), calls/s ${ratio((p) => p.callsPerSec)}, p50 ${ratio((p) => p.latencyMs.p50)}, p99 ${ratio((p) => p.latencyMs.p99)}`,
      );
    }
  }
}

/** Run the comparison; true when every call of every row was answered right. */
export async function runGatewayCompare(opts, pin) {
  let current;
  process.on('exit', () => current?.killNow());
  const rows = withBaseline(
    GATEWAY_ROWS.filter((r) => opts.gatewayRows.includes(r.name)),
    opts.baseline,
  );
  const cpus = os.cpus();
  const startedAt = Date.now();
  console.log(
    `mrtr gateway bench — node ${process.version}, ${cpus.length} × ${cpus[0]?.model ?? 'cpu'}, ${opts.repeat} pass(es), callers ${opts.callers.join(', ')}, warm-up ${opts.warmup} s, window ${opts.seconds} s`,
  );
  console.log(
    pin.pinned
      ? `pinned: each front and its upstream on CPU ${pin.serverCpu}, this load generator on CPU ${pin.generatorCpu}`
      : `not pinned (${pin.why}): the stacks and the load generator share the CPUs`,
  );
  const passes = Object.fromEntries(rows.map((r) => [r.name, []]));
  const results = {};
  for (const row of rows) {
    const why = missing(row);
    if (why) results[row.name] = { skipped: true, reason: why };
  }
  for (let rep = 0; rep < opts.repeat; rep++) {
    if (opts.repeat > 1) console.log(`\n##### pass ${rep + 1} of ${opts.repeat}`);
    // With a baseline, every other pass measures it first: the one measured first in a pass tends to come out behind.
    for (const row of opts.baseline && rep % 2 === 1 ? swapTwins(rows) : rows) {
      if (results[row.name]) continue; // skipped, or failed in an earlier pass
      console.log(`\n=== ${row.name}: ${row.label}`);
      if (opts.quietWait > 0) {
        const quiet = await waitForQuiet({ maxWaitMs: opts.quietWait * 1000 });
        if (!quiet.quiet)
          console.log(`  machine busy (${Math.round(quiet.busy * 100)} % of a core) — measuring anyway`);
      }
      const pass = await passOf(row, opts, (s) => {
        current = s;
      });
      if (pass.failed) results[row.name] = { failed: true, reason: pass.reason };
      else passes[row.name].push(pass);
    }
  }
  for (const row of rows) {
    if (results[row.name]) continue;
    const byCallers = {};
    for (const n of opts.callers) byCallers[n] = medianPoint(passes[row.name].map((p) => p.byCallers[n]));
    results[row.name] = { label: row.label, byCallers };
  }

  if (opts.baseline) printBaseline(rows, passes, opts.callers);
  const goalLoad = Math.max(...opts.callers);
  const goals = gatewayGoals(results, goalLoad, opts.callers);
  console.log(`\n=== results (median of ${opts.repeat} pass(es) per point)\n`);
  console.log(gatewayTable(results, opts.callers));
  console.log(
    '  front µs/call: the gateway or proxy process alone; upstream µs/call: every other process of the stack (the stdio\n' +
      '  server(s) it started, or the SDK server). +p50/+p99: latency added to the same call made straight to the SDK\n' +
      '  server at the same callers count. upstream req/call: HTTP requests the SDK server received per call. RSS:\n' +
      '  peak resident memory over the window. other CPU: other processes on the machine (! above 20 % of a core).',
  );
  console.log(`\ngoals at ${goalLoad} caller(s):`);
  for (const line of goalLines(goals)) console.log(line);
  const policy = measurePolicy(REPO_ROOT);
  printPolicy(policy);

  const failures = [];
  for (const row of rows) {
    const r = results[row.name];
    if (r.failed) failures.push(`${row.name}: ${r.reason}`);
    for (const [n, p] of Object.entries(r.byCallers ?? {})) {
      if (p.errors)
        failures.push(`${row.name}, ${n} caller(s): ${p.errors} error(s), e.g. ${p.errorSamples[0]}`);
      if (p.serverDied) failures.push(`${row.name}, ${n} caller(s): a process of the stack died`);
    }
  }
  if (policy?.failed) failures.push(`gateway policy bench: ${policy.failed}`);
  if (opts.json) {
    const file = writeJson(
      join(REPO_ROOT, 'bench', 'results'),
      {
        bench: 'gateway',
        startedAt: new Date(startedAt).toISOString(),
        command: `npm run bench -- ${process.argv.slice(2).join(' ')}`,
        config: {
          seconds: opts.seconds,
          warmup: opts.warmup,
          callers: opts.callers,
          repeat: opts.repeat,
          rows: rows.map((r) => r.name),
          pinned: pin.pinned ? { serverCpu: pin.serverCpu, generatorCpu: pin.generatorCpu } : false,
        },
        env: {
          node: process.version,
          platform: `${os.platform()} ${os.release()}`,
          cpus: cpus.length,
          cpuModel: cpus[0]?.model,
          totalMemMiB: Math.round(os.totalmem() / 2 ** 20),
          loadavg: os.loadavg(),
          commit: gitCommit(),
        },
        rows,
        results,
        goals,
        gatewayPolicy: policy,
        ok: failures.length === 0,
        failures,
      },
      'gateway',
    );
    console.log(`\nresults written to ${file}`);
  }
  if (failures.length) {
    console.error('\n!!! BENCH RUN FAILED — figures above are NOT trustworthy:');
    for (const f of failures) console.error(`!!!   ${f}`);
  }
  return failures.length === 0;
}
