#!/usr/bin/env node
// `npm run bench`: two-round MRTR flow throughput of our server vs the
// official TypeScript SDK vs a bare node:http responder. See bench/README.md.
import { existsSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { GATEWAY_NAMES, parseArgs, USAGE } from './lib/args.mjs';
import { measurePolicy, printPolicy } from './lib/gateway-policy-run.mjs';
import { createClient } from './lib/http-client.mjs';
import { runLegacyLoop } from './lib/legacy-load.mjs';
import { runClosedLoop } from './lib/load.mjs';
import {
  CheckError,
  callHeaders,
  checkEcho,
  echoBody,
  parseRpcResponse,
  probeContract,
  round1Body,
  TOOLS_CALL_HEADERS,
} from './lib/mcp.mjs';
import { pinPlan, runPinned } from './lib/pinning.mjs';
import { createRawClient } from './lib/raw-client.mjs';
import { computeRatios, perRequest, printTable, writeJson } from './lib/report.mjs';
import {
  authHeaders,
  cpuWindow,
  createSampler,
  gitCommit,
  OURS_ENTRY,
  REPO_ROOT,
  SERVER_DEFS,
  startServer,
  useBaseline,
  useOtlpSink,
  usePinning,
  waitForQuiet,
} from './lib/servers.mjs';

let opts;
try {
  opts = parseArgs(process.argv.slice(2));
} catch (e) {
  console.error(`error: ${e.message}\n\n${USAGE}`);
  process.exit(2);
}
if (opts.baseline) useBaseline(opts.baseline);
if (opts.help) {
  console.log(USAGE);
  process.exit(0);
}
let pin;
try {
  pin = pinPlan(opts.pin);
} catch (e) {
  console.error(`error: ${e.message}`);
  process.exit(2);
}
runPinned(pin);
usePinning(pin);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let current; // running server child, for cleanup on signals
// Never leave a server child behind, even if this process dies of an exception.
process.on('exit', () => current?.killNow());
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, async () => {
    console.error(`\n${sig}: stopping`);
    await current?.stop().catch(() => {});
    process.exit(130);
  });
}

// --curves: cost as work grows (lib/curves.mjs) instead of the table; it starts its servers the way the rows do.
if (opts.curves) {
  const { runCurves } = await import('./lib/curves.mjs');
  opts.pinned = pin.pinned ? { serverCpu: pin.serverCpu, generatorCpu: pin.generatorCpu } : false;
  process.exit((await runCurves(opts)) ? 0 : 1);
}

// --gateway: mrtr's gateway side by side with the proxies people install (lib/gateway-compare.mjs) instead of the table.
if (opts.gateway) {
  const { runGatewayCompare } = await import('./lib/gateway-compare.mjs');
  process.exit((await runGatewayCompare(opts, pin)) ? 0 : 1);
}

// --tracing --together: tracing off and on served at once, their CPU per flow compared pass by pass (lib/side-by-side.mjs).
if (opts.together) {
  const { runTogether } = await import('./lib/side-by-side.mjs');
  const { startOtlpSink } = await import('./lib/otlp-sink.mjs');
  const receiver = await startOtlpSink();
  useOtlpSink(receiver.url);
  await runTogether(opts, Math.max(3, opts.repeat));
  await receiver.close();
  process.exit(0);
}

const DISTURBED_OTHER = 0.2; // cores used by other processes during the window
const DISTURBED_STEAL = 0.05; // cores stolen by the hypervisor

/** One warm-up + measured window against a running server. */
async function measureOnce(def, server, client) {
  const sampler = createSampler(server.pid);
  const warmupMs = opts.warmup * 1000;
  const measureMs = opts.seconds * 1000;
  const window = cpuWindow(sampler);
  const { marks, mark } = window;
  const endTimer = setTimeout(() => mark('end'), warmupMs + measureMs);
  process.stdout.write(
    `  warm-up ${opts.warmup} s, measuring ${opts.seconds} s at concurrency ${opts.concurrency} … `,
  );
  const onMeasureStart = () => {
    const procs = sampler.refreshTree();
    if (procs > 1)
      console.log(`\n  note: server process tree has ${procs} processes; RSS/CPU are summed over all`);
    mark('start');
  };
  const load =
    def.kind === 'legacy'
      ? await runLegacyLoop({
          url: server.url,
          concurrency: opts.concurrency,
          warmupMs,
          measureMs,
          isAlive: server.isAlive,
          onMeasureStart,
        })
      : await runClosedLoop({
          kind: def.kind,
          tool: def.tool,
          post: client.post,
          concurrency: opts.concurrency,
          warmupMs,
          measureMs,
          isAlive: server.isAlive,
          onMeasureStart,
        });
  clearTimeout(endTimer);
  if (!marks.end) mark('end');
  const mem = sampler.stop();

  const { serverCpu, generatorCpu, otherCpu, irqCpu, stealCpu } = window.cpu();
  const disturbed = otherCpu > DISTURBED_OTHER || stealCpu > DISTURBED_STEAL;

  const r = {
    ops: load.ops,
    latencyMs: load.latencyMs,
    peakRssMiB: mem.peakHwmMiB,
    peakSampledRssMiB: mem.peakRssMiB,
    serverProcesses: mem.processes,
    serverCpu,
    generatorCpu,
    otherCpu,
    irqCpu,
    stealCpu,
    disturbed,
    errors: load.errors,
    warmupErrors: load.warmupErrors,
    serverDied: load.serverDied || !server.isAlive(),
  };
  if (def.kind === 'mrtr' || def.kind === 'legacy') {
    // A 2025 flow is two requests too: the call (answered on its stream) and the POSTed answer.
    r.flowsPerSec = load.opsPerSec;
    r.roundsPerSec = load.opsPerSec * 2;
  } else {
    r.reqPerSec = load.opsPerSec;
  }
  const rate = perRequest(def) ? `${Math.round(r.reqPerSec)} req/s` : `${Math.round(r.flowsPerSec)} flows/s`;
  console.log(`${rate}, p50 ${r.latencyMs.p50.toFixed(2)} ms`);
  if (disturbed) {
    console.log(
      `  WARNING: disturbed window — other processes ${(otherCpu * 100).toFixed(0)} % of a core, steal ${(stealCpu * 100).toFixed(0)} %`,
    );
  }
  return r;
}

async function benchOne(name) {
  const def = SERVER_DEFS[name];
  const base = { name, label: def.label, kind: def.kind };
  const why = def.missing();
  if (why) {
    console.log(`\n=== ${def.label}: SKIPPED — ${why}`);
    return { ...base, skipped: true, reason: why };
  }

  console.log(`\n=== ${def.label}`);
  // For ours: which build is being measured (tsc rewrites main.js on every build).
  const builtAt = name === 'ours' ? statSync(OURS_ENTRY).mtime.toISOString() : undefined;
  let server;
  try {
    server = await startServer(name, { verbose: opts.verbose });
  } catch (e) {
    console.log(`  FAILED to start: ${e.message}`);
    return { ...base, failed: true, reason: e.message };
  }
  current = server;
  console.log(`  pid ${server.pid}, ${server.url}`);
  const plain = (opts.client === 'raw' ? createRawClient : createClient)(server.url, opts.concurrency);
  // The auth rows send a bearer token on every request, as a client of such a server must.
  const extra = await authHeaders(name);
  // One merged object per headers object: the raw client caches each header block by object identity.
  const merged = new WeakMap();
  const withAuth = (headers) => {
    let h = merged.get(headers);
    if (h === undefined) {
      h = Object.freeze({ ...headers, ...extra });
      merged.set(headers, h);
    }
    return h;
  };
  const client = extra
    ? { ...plain, post: (headers, body, timeoutMs) => plain.post(withAuth(headers), body, timeoutMs) }
    : plain;
  try {
    // One-off contract check, outside the measured flow.
    let contract = { problems: [], notes: [] };
    if (def.kind === 'mrtr') {
      contract = await probeContract(client.post);
    } else if (def.kind === 'legacy') {
      // Every measured 2025 flow checks its own result (lib/legacy-load.mjs): a wrong answer counts as an error.
    } else if (def.kind === 'call') {
      try {
        const m = parseRpcResponse(
          await client.post(callHeaders(def.tool), echoBody('probe', def.tool, 'probe')),
          'probe',
        );
        checkEcho(m, 'probe');
        if (m.result.resultType !== 'complete')
          contract.problems.push(
            `echo probe: resultType ${JSON.stringify(m.result.resultType)}, want "complete"`,
          );
      } catch (e) {
        contract.problems.push(`echo probe: ${e instanceof CheckError ? e.message : e}`);
      }
    } else {
      try {
        parseRpcResponse(await client.post(TOOLS_CALL_HEADERS, round1Body(1, 'probe')), 0);
      } catch (e) {
        contract.problems.push(`bare probe: ${e instanceof CheckError ? e.message : e}`);
      }
    }
    for (const n of contract.notes) console.log(`  note: ${n}`);
    for (const p of contract.problems) console.log(`  CONTRACT MISMATCH: ${p}`);

    // Measure; if something else was hogging the CPU, wait and measure again.
    const attempts = [];
    for (let i = 0; i <= opts.retries; i++) {
      let quiet;
      if (opts.quietWait > 0) {
        quiet = await waitForQuiet({
          maxWaitMs: opts.quietWait * 1000,
          onWait: (busy) =>
            console.log(
              `  machine busy (${(busy * 100).toFixed(0)} % of a core outside the bench); waiting up to ${opts.quietWait} s …`,
            ),
        });
        if (!quiet.quiet)
          console.log(
            `  WARNING: machine still busy (${(quiet.busy * 100).toFixed(0)} % of a core) — measuring anyway`,
          );
      }
      const a = await measureOnce(def, server, client);
      a.preRunBusyCpu = quiet?.busy;
      attempts.push(a);
      if (!a.disturbed || a.serverDied || i === opts.retries) break;
      console.log(`  re-measuring (attempt ${i + 2} of ${opts.retries + 1})`);
    }
    // Report the least disturbed attempt; errors from every attempt count.
    const best = attempts.reduce((x, y) => (y.otherCpu + y.stealCpu < x.otherCpu + x.stealCpu ? y : x));
    const allErrors = attempts.reduce((n, a) => n + a.errors.total + a.warmupErrors.total, 0);
    const result = {
      ...base,
      url: server.url,
      pid: server.pid,
      builtAt,
      contract,
      ...best,
      peakRssMiB: Math.max(...attempts.map((a) => a.peakRssMiB)),
      errorsAllAttempts: allErrors,
      attempts: attempts.length > 1 ? attempts.map(({ errors, warmupErrors, ...rest }) => rest) : undefined,
      serverDied: attempts.some((a) => a.serverDied),
    };
    if (allErrors) {
      console.log(`  ERRORS: ${allErrors}`);
      for (const a of attempts) {
        const kinds = { ...a.warmupErrors.byKind, ...a.errors.byKind };
        if (Object.keys(kinds).length) console.log(`    by kind: ${JSON.stringify(kinds)}`);
        for (const s of [...a.warmupErrors.samples, ...a.errors.samples].slice(0, 5)) console.log(`    ${s}`);
      }
    }
    if (result.serverDied) console.log(`  SERVER DIED during the run; output tail:\n${server.stderrTail()}`);
    return result;
  } finally {
    client.close();
    await server.stop();
    current = undefined;
  }
}

// The tracing row sends its spans to a receiver here (its CPU is the load generator's, not the server's).
const sink = opts.only.some((n) => SERVER_DEFS[n]?.tracing)
  ? await (await import('./lib/otlp-sink.mjs')).startOtlpSink()
  : undefined;
if (sink) useOtlpSink(sink.url);

const startedAt = Date.now();
const oursBuiltAtStart = existsSync(OURS_ENTRY) ? statSync(OURS_ENTRY).mtime.toISOString() : null;
const cpus = os.cpus();
console.log(
  `mrtr flow bench — node ${process.version}, ${cpus.length} × ${cpus[0]?.model ?? 'cpu'}, ` +
    `${opts.client} client, ${opts.repeat} pass(es), concurrency ${opts.concurrency}, warm-up ${opts.warmup} s, window ${opts.seconds} s, servers: ${opts.only.join(', ')}`,
);
console.log(
  pin.pinned
    ? `pinned: servers on CPU ${pin.serverCpu}, this load generator on CPU ${pin.generatorCpu}`
    : `not pinned (${pin.why}): servers and the load generator share the CPUs`,
);

// Run the servers one at a time; with --repeat N, N interleaved passes
// (ours, sdk, bare, ours, sdk, bare, …) so slow drifts of the machine hit all
// servers alike. Each server is reported by its median pass.
const passes = Object.fromEntries(opts.only.map((n) => [n, []]));
for (let rep = 0; rep < opts.repeat; rep++) {
  if (opts.repeat > 1) console.log(`\n##### pass ${rep + 1} of ${opts.repeat}`);
  for (const name of opts.only) {
    const prev = passes[name].at(-1);
    if (prev?.skipped || prev?.failed) continue;
    passes[name].push(await benchOne(name));
    await sleep(1000); // let the machine settle
  }
}

const rateOf = (r) => (perRequest(r) ? r.reqPerSec : r.flowsPerSec);
function medianPass(list) {
  const done = list.filter((r) => !r.skipped && !r.failed);
  if (done.length < list.length || list.length === 1)
    return list.find((r) => r.skipped || r.failed) ?? list[0];
  // Prefer passes whose window was not disturbed by other processes.
  const clean = done.filter((r) => !r.disturbed);
  const sorted = [...(clean.length ? clean : done)].sort((a, b) => rateOf(a) - rateOf(b));
  const med = sorted[Math.floor((sorted.length - 1) / 2)];
  return {
    ...med,
    contract: {
      problems: [...new Set(done.flatMap((r) => r.contract.problems))],
      notes: [...new Set(done.flatMap((r) => r.contract.notes))],
    },
    peakRssMiB: Math.max(...done.map((r) => r.peakRssMiB)),
    errorsAllAttempts: done.reduce((n, r) => n + r.errorsAllAttempts, 0),
    serverDied: done.some((r) => r.serverDied),
    disturbed: med.disturbed,
    builds: [...new Set(done.map((r) => r.builtAt).filter(Boolean))],
    passes: done.map((r) => ({
      rate: rateOf(r),
      p50: r.latencyMs.p50,
      p99: r.latencyMs.p99,
      peakRssMiB: r.peakRssMiB,
      otherCpu: r.otherCpu,
      disturbed: r.disturbed,
      errors: r.errorsAllAttempts,
    })),
  };
}
const results = Object.fromEntries(opts.only.map((n) => [n, medianPass(passes[n])]));
if (opts.repeat > 1) {
  console.log(
    '\n=== per-pass rates (flows/s for MRTR servers, req/s for bare); the median pass is reported below',
  );
  for (const n of opts.only) {
    const r = results[n];
    if (r.passes)
      console.log(`  ${r.label.padEnd(16)} ${r.passes.map((p) => Math.round(p.rate)).join('  ')}`);
  }
}

const ratios = computeRatios(results);
console.log('\n=== results');
printTable(results, ratios, opts.only);
await sink?.close();
const tracingCost = ratios.variants?.['ours-tracing'];
if (tracingCost) {
  const met = tracingCost.cpu <= 1.15 ? 'met' : 'NOT met';
  console.log(
    `\ntracing on (100 %, OTLP) ÷ off, server CPU per flow: ${tracingCost.cpu.toFixed(2)}× (goal ≤ 1.15×: ${met}); ` +
      `flows/s ${tracingCost.flows.toFixed(2)}×; the receiver took ${sink.seen.requests} exports, ${(sink.seen.bytes / 2 ** 20).toFixed(1)} MiB`,
  );
}

// With the table's gateway rows: what the gateway's policy costs a call (goal ≤ 100 µs per decision).
const policy = opts.only.some((n) => GATEWAY_NAMES.includes(n)) ? measurePolicy(REPO_ROOT) : undefined;
printPolicy(policy);

const failures = [];
const warnings = [];
for (const name of opts.only) {
  const r = results[name];
  if (r.failed) failures.push(`${name}: failed — ${r.reason}`);
  if (r.skipped) continue;
  if (r.contract?.problems.length)
    failures.push(`${name}: ${r.contract.problems.length} contract mismatch(es)`);
  const errs = r.errorsAllAttempts ?? 0;
  if (errs) failures.push(`${name}: ${errs} response error(s)`);
  if (r.disturbed)
    warnings.push(
      `${name}: measured while other processes used ${(r.otherCpu * 100).toFixed(0)} % of a core — rerun on a quiet machine`,
    );
  if (r.serverDied) failures.push(`${name}: server died`);
}
if (policy?.failed) failures.push(`gateway policy bench: ${policy.failed}`);
{
  const builds = new Set(passes.ours?.map((r) => r.builtAt).filter(Boolean));
  if (builds.size > 1)
    warnings.push(
      `ours: dist/ was rebuilt during the run (${builds.size} builds measured) — rerun for one build`,
    );
}
const skipped = opts.only.filter((n) => results[n].skipped);

if (opts.json) {
  const file = writeJson(join(REPO_ROOT, 'bench', 'results'), {
    bench: 'flows',
    startedAt: new Date(startedAt).toISOString(),
    config: {
      seconds: opts.seconds,
      warmup: opts.warmup,
      concurrency: opts.concurrency,
      only: opts.only,
      client: opts.client,
      quietWait: opts.quietWait,
      retries: opts.retries,
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
      oursBuiltAt: oursBuiltAtStart,
    },
    results,
    ratios,
    gatewayPolicy: policy,
    ok: failures.length === 0,
    failures,
    warnings,
    skipped,
  });
  console.log(`\nresults written to ${file}`);
}

for (const w of warnings) console.log(`\nWARNING: ${w}`);
if (skipped.length)
  console.log(`\nnote: skipped ${skipped.join(', ')} (see above); ratios involving them are n/a`);
if (failures.length) {
  console.error('\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!');
  console.error('!!! BENCH RUN FAILED — figures above are NOT trustworthy:');
  for (const f of failures) console.error(`!!!   ${f}`);
  console.error('!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!');
  process.exit(1);
}
