// Table + ratios printing and the JSON result file.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const f0 = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const f1 = (n) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const f2 = (n) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
const pct = (n) => (Number.isFinite(n) ? `${(n * 100).toFixed(1)} %` : 'n/a');

function pad(rows) {
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows
    .map((r) => r.map((c, i) => (i === 0 ? String(c).padEnd(w[i]) : String(c).padStart(w[i]))).join('  '))
    .join('\n');
}

/** Rows measured per request rather than per two-round flow: the bare responder and the gateway rows' echo call. */
export const perRequest = (r) => r.kind === 'bare' || r.kind === 'call';

/** Server CPU time per operation in µs (per flow for MRTR servers, per request for bare): less load-sensitive
 * than throughput, since it does not depend on how quickly the load generator turns responses around. */
export function cpuMicrosPerOp(r) {
  const rate = perRequest(r) ? r.reqPerSec : r.flowsPerSec;
  return Number.isFinite(r.serverCpu) && rate > 0 ? (r.serverCpu / rate) * 1e6 : Number.NaN;
}

export function computeRatios(results) {
  const ok = (n) => results[n] && !results[n].skipped && !results[n].failed;
  const r = {};
  if (ok('ours') && ok('sdk')) {
    r.oursOverSdkFlows = results.ours.flowsPerSec / results.sdk.flowsPerSec;
    r.oursOverSdkP50 = results.ours.latencyMs.p50 / results.sdk.latencyMs.p50;
    r.sdkOverOursCpuPerFlow = cpuMicrosPerOp(results.sdk) / cpuMicrosPerOp(results.ours);
  }
  if (ok('ours') && ok('baseline')) {
    r.oursOverBaselineFlows = results.ours.flowsPerSec / results.baseline.flowsPerSec;
    r.baselineOverOursCpuPerFlow = cpuMicrosPerOp(results.baseline) / cpuMicrosPerOp(results.ours);
  }
  if (ok('ours-full') && ok('baseline-full')) {
    r.fullOverBaselineFullFlows = results['ours-full'].flowsPerSec / results['baseline-full'].flowsPerSec;
    r.baselineFullOverFullCpuPerFlow =
      cpuMicrosPerOp(results['baseline-full']) / cpuMicrosPerOp(results['ours-full']);
  }
  // Each variant of ours (a guard, auth, an audit sink switched on) against plain ours, measured in the same run.
  r.variants = {};
  for (const [name, result] of Object.entries(results)) {
    if (!name.startsWith('ours-') || !ok(name) || !ok('ours')) continue;
    r.variants[name] = {
      label: result.label,
      flows: result.flowsPerSec / results.ours.flowsPerSec,
      p50: result.latencyMs.p50 / results.ours.latencyMs.p50,
      p99: result.latencyMs.p99 / results.ours.latencyMs.p99,
      // What the part costs the server per flow: the figure pinning makes honest.
      cpu: cpuMicrosPerOp(result) / cpuMicrosPerOp(results.ours),
    };
  }
  if (ok('ours-full') && ok('sdk'))
    r.sdkOverFullCpuPerFlow = cpuMicrosPerOp(results.sdk) / cpuMicrosPerOp(results['ours-full']);
  // 2025 clients: mrtr's bridge against the SDK in its stateful mode, and against the MRTR path of the same server.
  if (ok('bridge-2025') && ok('sdk-stateful-2025'))
    r.bridgeOverSdkStatefulFlows =
      results['bridge-2025'].flowsPerSec / results['sdk-stateful-2025'].flowsPerSec;
  if (ok('bridge-2025') && ok('ours'))
    r.bridgeOverOursFlows = results['bridge-2025'].flowsPerSec / results.ours.flowsPerSec;
  // The gateway: each gateway row against the same call straight to its upstream, measured in the same run.
  r.gateway = {};
  for (const name of ['gw-gateway', 'gw-gateway-full']) {
    if (!ok(name) || !ok('gw-direct')) continue;
    const [via, direct] = [results[name], results['gw-direct']];
    r.gateway[name] = {
      label: via.label,
      addedP50Ms: via.latencyMs.p50 - direct.latencyMs.p50,
      addedP99Ms: via.latencyMs.p99 - direct.latencyMs.p99,
      reqPerSec: via.reqPerSec / direct.reqPerSec,
      // Server CPU of a gateway row is the gateway's plus the upstream's: the difference is the gateway's own.
      addedCpuUsPerCall: cpuMicrosPerOp(via) - cpuMicrosPerOp(direct),
    };
  }
  if (ok('ours') && ok('bare')) r.oursRoundOverBare = results.ours.roundsPerSec / results.bare.reqPerSec;
  if (ok('sdk') && ok('bare')) r.sdkRoundOverBare = results.sdk.roundsPerSec / results.bare.reqPerSec;
  return r;
}

export function printTable(results, ratios, order) {
  const rows = [
    [
      'server',
      'flows/s',
      'req/s',
      'p50 ms',
      'p99 ms',
      'peak RSS MiB',
      'srv CPU',
      'srv µs/op',
      'gen CPU',
      'other CPU',
      'errors',
    ],
  ];
  for (const name of order) {
    const r = results[name];
    if (!r) continue;
    if (r.skipped || r.failed) {
      rows.push([r.label ?? name, r.skipped ? 'SKIPPED' : 'FAILED', '', '', '', '', '', '', '', '', '']);
      continue;
    }
    const isBare = perRequest(r);
    rows.push([
      r.label,
      isBare ? '—' : f0(r.flowsPerSec),
      f0(isBare ? r.reqPerSec : r.roundsPerSec),
      f2(r.latencyMs.p50),
      f2(r.latencyMs.p99),
      f1(r.peakRssMiB),
      pct(r.serverCpu),
      f0(cpuMicrosPerOp(r)),
      pct(r.generatorCpu),
      `${pct(r.otherCpu)}${r.disturbed ? ' !' : ''}`,
      String(r.errorsAllAttempts ?? r.errors.total + r.warmupErrors.total),
    ]);
  }
  console.log(pad(rows));
  console.log(
    '  flows/s: complete 2-round MRTR flows per second; req/s: HTTP requests per second (2 per flow; bare: 1 per op)',
  );
  console.log(
    '  p50/p99: per flow (both rounds) for MRTR servers, per request for bare. peak RSS = VmHWM of the server child.',
  );
  console.log(
    '  srv / gen / other CPU: CPU of the server child / this load generator / all other processes during the window',
  );
  console.log(
    '  (100 % = one core; "other" well above a few % means something else was running and the figures are disturbed).',
  );
  console.log('  srv µs/op: server CPU time per flow (MRTR servers) or per request (bare).');
  console.log(
    '  gateway rows (gw-*): one echo tools/call per op, p50/p99 per request; srv CPU sums the gateway and its upstream.',
  );
  console.log(
    '  audit rows: two events per round (its intent before the tool runs, its outcome before the answer), so audit events/s are twice their req/s.',
  );
  console.log('');
  console.log('ratios:');
  console.log(
    `  ours / sdk  flows/s          : ${ratios.oursOverSdkFlows !== undefined ? `${f2(ratios.oursOverSdkFlows)}×` : 'n/a'}`,
  );
  console.log(
    `  ours / sdk  p50 latency      : ${ratios.oursOverSdkP50 !== undefined ? `${f2(ratios.oursOverSdkP50)}×` : 'n/a'}`,
  );
  console.log(
    `  sdk / ours  CPU per flow     : ${ratios.sdkOverOursCpuPerFlow !== undefined ? `${f2(ratios.sdkOverOursCpuPerFlow)}×` : 'n/a'}`,
  );
  if (ratios.oursOverBaselineFlows !== undefined) {
    console.log(`  ours / baseline flows/s      : ${f2(ratios.oursOverBaselineFlows)}×`);
    console.log(`  baseline / ours CPU per flow : ${f2(ratios.baselineOverOursCpuPerFlow)}×`);
  }
  if (ratios.fullOverBaselineFullFlows !== undefined) {
    console.log(`  full stack, ours / baseline flows/s      : ${f2(ratios.fullOverBaselineFullFlows)}×`);
    console.log(`  full stack, baseline / ours CPU per flow : ${f2(ratios.baselineFullOverFullCpuPerFlow)}×`);
  }
  if (ratios.bridgeOverSdkStatefulFlows !== undefined)
    console.log(`  bridge / sdk stateful flows/s (2025 clients): ${f2(ratios.bridgeOverSdkStatefulFlows)}×`);
  if (ratios.bridgeOverOursFlows !== undefined)
    console.log(`  bridge / MRTR path flows/s   : ${f2(ratios.bridgeOverOursFlows)}×`);
  for (const v of Object.values(ratios.variants ?? {})) {
    console.log(
      `  ${v.label} / ours: flows/s ${f2(v.flows)}× (${pct(v.flows - 1)}), CPU per flow ${f2(v.cpu)}×, p50 ${f2(v.p50)}×, p99 ${f2(v.p99)}×`,
    );
  }
  for (const g of Object.values(ratios.gateway ?? {})) {
    const met = (added, goal) => (added <= goal ? `≤ ${goal} ms: met` : `> ${goal} ms: MISSED`);
    console.log(
      `  ${g.label} − direct: +${f2(g.addedP50Ms)} ms p50 (${met(g.addedP50Ms, 1)}), +${f2(g.addedP99Ms)} ms p99 (${met(g.addedP99Ms, 5)}), req/s ${f2(g.reqPerSec)}×, +${f0(g.addedCpuUsPerCall)} µs CPU per call`,
    );
  }
  console.log(
    `  ours rounds/s / bare req/s   : ${ratios.oursRoundOverBare !== undefined ? pct(ratios.oursRoundOverBare) : 'n/a'}`,
  );
  console.log(
    `  sdk  rounds/s / bare req/s   : ${ratios.sdkRoundOverBare !== undefined ? pct(ratios.sdkRoundOverBare) : 'n/a'}`,
  );
  printGoals(results, ratios);
}

/** The speed goals, each with the figure of this run and whether it is met (only those this run measured). */
function printGoals(results, ratios) {
  const lines = [];
  const goal = (what, value, met) =>
    lines.push(`  ${what.padEnd(44)} ${value.padStart(8)}  ${met ? 'met' : 'MISSED'}`);
  if (ratios.sdkOverOursCpuPerFlow !== undefined)
    goal(
      "bare mrtr CPU/flow ≤ 1/10 of the SDK's",
      `1/${f1(ratios.sdkOverOursCpuPerFlow)}`,
      ratios.sdkOverOursCpuPerFlow >= 10,
    );
  if (ratios.oursRoundOverBare !== undefined)
    goal(
      'one round ≥ 50 % of bare node:http req/s',
      pct(ratios.oursRoundOverBare),
      ratios.oursRoundOverBare >= 0.5,
    );
  if (ratios.sdkOverFullCpuPerFlow !== undefined)
    goal(
      "full stack CPU/flow ≤ 1/5 of the SDK's",
      `1/${f1(ratios.sdkOverFullCpuPerFlow)}`,
      ratios.sdkOverFullCpuPerFlow >= 5,
    );
  const full = ratios.variants?.['ours-full'];
  if (full) goal("full stack CPU/flow ≤ 1.25× bare mrtr's", `${f2(full.cpu)}×`, full.cpu <= 1.25);
  const ours = results.ours;
  if (ours && !ours.skipped && !ours.failed)
    goal('bare mrtr peak RSS under load ≤ 90 MiB', `${f1(ours.peakRssMiB)} MiB`, ours.peakRssMiB <= 90);
  if (lines.length === 0) return;
  console.log('goals (issue: speed with every control on):');
  for (const line of lines) console.log(line);
}

export function writeJson(dir, doc, prefix = 'flows') {
  mkdirSync(dir, { recursive: true });
  const stamp = new Date(doc.startedAt).toISOString().replace(/[:.]/g, '-');
  const file = join(dir, `${prefix}-${stamp}.json`);
  writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
  return file;
}
