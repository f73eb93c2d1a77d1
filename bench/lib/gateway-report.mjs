// The table and the goals of `npm run bench -- --gateway`, from the measured figures (lib/gateway-compare.mjs).
// Pure functions of the results: test/bench/gateway-report.test.ts feeds them figures of its own.
import { DIRECT_OF, GATEWAY_ROWS, WORK } from './gateway-rows.mjs';

const f0 = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—');
const f2 = (n) => (Number.isFinite(n) ? n.toFixed(2) : '—');
const plus = (n) => (Number.isFinite(n) ? `${n >= 0 ? '+' : ''}${n.toFixed(2)}` : '—');

/** The pass-through proxy each stdio row of mrtr's gateway is compared with: mcp-proxy, with a caller of its era. */
export const PROXY_OF = { 2026: 'fs-mcp-proxy-2026', 2025: 'fs-mcp-proxy-2025' };

/** The median pass of one point (by calls/s), with every pass's figures kept beside it. */
export function medianPoint(points) {
  const sorted = [...points].sort((a, b) => a.callsPerSec - b.callsPerSec);
  const med = sorted[Math.floor((sorted.length - 1) / 2)];
  return {
    ...med,
    errors: points.reduce((n, p) => n + p.errors, 0),
    serverDied: points.some((p) => p.serverDied),
    passes: points.map(({ callsPerSec, latencyMs, frontUsPerCall, upstreamUsPerCall, otherCpu }) => ({
      callsPerSec,
      p50: latencyMs.p50,
      p99: latencyMs.p99,
      frontUsPerCall,
      upstreamUsPerCall,
      otherCpu,
    })),
  };
}

/** One measured point: a row at a callers count, or undefined when the row was skipped or failed. */
export function point(results, name, callers) {
  const r = results[name];
  return r && !r.skipped && !r.failed ? r.byCallers?.[callers] : undefined;
}

/** Latency a row adds to the same call made straight to its upstream, at the same callers count (HTTP rows). */
export function added(results, name, callers) {
  const row = GATEWAY_ROWS.find((r) => r.name === name);
  const straight = DIRECT_OF[row?.upstream];
  const [via, direct] = [point(results, name, callers), point(results, straight, callers)];
  if (!straight || name === straight || !via || !direct) return undefined;
  return { p50: via.latencyMs.p50 - direct.latencyMs.p50, p99: via.latencyMs.p99 - direct.latencyMs.p99 };
}

/**
 * The goals at `callers` (the goal load: 32), each `{ goal, figure, target, met }`; `met` is undefined when a
 * row it needs was not measured. Upstream requests per call are judged at every callers count measured.
 */
export function gatewayGoals(results, callers, allCallers = [callers]) {
  const goals = [];
  // A goal judged from a window other processes disturbed says so: its verdict is not to be quoted.
  const judge = (goal, value, target, points = []) =>
    goals.push({
      goal,
      value,
      figure: f2(value),
      target,
      met: Number.isFinite(value) ? value <= target : undefined,
      disturbed: points.some((p) => p?.disturbed),
    });
  const http = ['sdk', 'sdk2025'].flatMap((up) =>
    ['2026', '2025'].map((era) => [up, `${up}-gateway-${era}`]),
  );
  for (const [, name] of http)
    for (const n of allCallers)
      judge(
        `upstream requests per call, ${name}, ${n} caller(s)`,
        point(results, name, n)?.upstreamRequestsPerCall,
        1.1,
      );
  for (const era of ['2026', '2025']) {
    const [ours, proxy] = [
      point(results, `fs-gateway-${era}`, callers),
      point(results, PROXY_OF[era], callers),
    ];
    judge(
      `stdio: gateway CPU/call ÷ mcp-proxy's, ${era} callers`,
      ours && proxy ? ours.frontUsPerCall / proxy.frontUsPerCall : undefined,
      0.25,
      [ours, proxy],
    );
  }
  for (const [up, name] of http) {
    const [via, direct] = [point(results, name, callers), point(results, DIRECT_OF[up], callers)];
    judge(
      `HTTP: gateway CPU/call ÷ SDK server's (straight), ${name}`,
      via && direct ? via.frontUsPerCall / direct.upstreamUsPerCall : undefined,
      0.5,
      [via, direct],
    );
  }
  for (const [up, name] of http) {
    const a = added(results, name, callers);
    const both = [point(results, name, callers), point(results, DIRECT_OF[up], callers)];
    judge(`HTTP: added p50 ms, ${name}`, a?.p50, 1, both);
    judge(`HTTP: added p99 ms, ${name}`, a?.p99, 5, both);
  }
  const [full, one] = [
    point(results, 'fs-gateway-full-2026', callers),
    point(results, 'fs-gateway-2026', callers),
  ];
  judge(
    'stdio: every control on ÷ one rule, gateway CPU/call',
    full && one ? full.frontUsPerCall / one.frontUsPerCall : undefined,
    1.5,
    [full, one],
  );
  return goals;
}

function pad(rows) {
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows
    .map((r) => r.map((c, i) => (i === 0 ? String(c).padEnd(w[i]) : String(c).padStart(w[i]))).join('  '))
    .join('\n');
}

/** The table: a block per upstream, a line per row and callers count. */
export function gatewayTable(results, callersList) {
  const lines = [];
  for (const upstream of ['fs', 'sdk', 'sdk2025']) {
    const rows = [
      [
        upstream === 'fs' ? 'stdio upstream' : 'HTTP upstream',
        'callers',
        'calls/s',
        'p50 ms',
        'p99 ms',
        '+p50 ms',
        '+p99 ms',
        'front µs/call',
        'upstream µs/call',
        'upstream req/call',
        'front RSS MiB',
        'all RSS MiB',
        'other CPU',
        'errors',
      ],
    ];
    for (const row of GATEWAY_ROWS.filter((r) => r.upstream === upstream)) {
      const r = results[row.name];
      if (!r) continue;
      if (r.skipped || r.failed) {
        rows.push([row.label, r.skipped ? 'SKIPPED' : 'FAILED', ...Array(12).fill('')]);
        continue;
      }
      for (const n of callersList) {
        const p = r.byCallers?.[n];
        if (!p) continue;
        const a = added(results, row.name, n);
        rows.push([
          row.label,
          n,
          f0(p.callsPerSec),
          f2(p.latencyMs.p50),
          f2(p.latencyMs.p99),
          plus(a?.p50),
          plus(a?.p99),
          f0(p.frontUsPerCall),
          f0(p.upstreamUsPerCall),
          f2(p.upstreamRequestsPerCall),
          f0(p.frontRssMiB),
          f0(p.totalRssMiB),
          `${Math.round(p.otherCpu * 100)} %${p.disturbed ? ' !' : ''}`,
          p.errors,
        ]);
      }
    }
    if (rows.length > 1) lines.push(`${WORK[upstream]}:`, pad(rows), '');
  }
  return lines.join('\n');
}

/** The goal lines, each met or not (n/a when a row it needs was not measured). */
export function goalLines(goals) {
  const w = Math.max(...goals.map((g) => g.goal.length));
  return goals.map(
    (g) =>
      `  ${g.goal.padEnd(w)}  ${g.figure.padStart(8)}  goal ≤ ${String(g.target).padEnd(4)}  ${
        g.met === undefined ? 'n/a' : g.met ? 'met' : 'NOT MET'
      }${g.disturbed ? ' (disturbed window: do not quote)' : ''}`,
  );
}
