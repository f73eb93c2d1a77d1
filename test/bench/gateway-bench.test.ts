// `npm run bench -- --gateway` (bench/lib/gateway-*.mjs): its flags, and the table and goals it prints, from fixed
// figures. Nothing is measured or timed here; figures come from running the bench by hand (docs/performance.md).
import { describe, expect, it } from 'vitest';
import { parseArgs, SERVER_NAMES } from '../../bench/lib/args.mjs';
import {
  type GatewayPoint,
  type GatewayResults,
  gatewayGoals,
  gatewayTable,
  goalLines,
  medianPoint,
} from '../../bench/lib/gateway-report.mjs';

const at = (fields: Partial<GatewayPoint>): GatewayPoint => ({
  callsPerSec: 1000,
  latencyMs: { p50: 10, p99: 20 },
  frontUsPerCall: Number.NaN,
  upstreamUsPerCall: 100,
  upstreamRequestsPerCall: Number.NaN,
  frontRssMiB: 100,
  totalRssMiB: 150,
  otherCpu: 0.01,
  disturbed: false,
  errors: 0,
  ...fields,
});
const row = (p: Partial<GatewayPoint>) => ({ byCallers: { 32: at(p) } });

describe('the --gateway flags', () => {
  it('leaves the default run as it was: the table of every row, no comparison', () => {
    const opts = parseArgs([]);
    expect(opts.gateway).toBe(false);
    expect(opts.only).toEqual(SERVER_NAMES);
  });

  it('--tracing runs ours with tracing off and on, side by side, the traced row a variant of ours', () => {
    expect(parseArgs(['--tracing']).only).toEqual(['ours', 'ours-tracing']);
    expect(SERVER_NAMES).toContain('ours-tracing');
  });

  it('--together serves the two tracing rows at once; without it they run one after the other', () => {
    expect(parseArgs(['--tracing', '--together'])).toMatchObject({
      together: true,
      only: ['ours', 'ours-tracing'],
    });
    expect(parseArgs(['--tracing']).together).toBe(false);
  });

  it('runs every row at 1 and 32 callers, or the rows and callers asked for, in run order', () => {
    expect(parseArgs(['--gateway'])).toMatchObject({ gateway: true, callers: [1, 32] });
    expect(
      parseArgs(['--gateway-rows', 'sdk-direct-2026,fs-gateway-2026', '--callers=32,4,32']),
    ).toMatchObject({
      gateway: true,
      gatewayRows: ['fs-gateway-2026', 'sdk-direct-2026'],
      callers: [4, 32],
    });
  });

  it('names an unknown row and a callers count below one', () => {
    expect(() => parseArgs(['--gateway-rows', 'fs-gateway-2026,nginx'])).toThrow(
      '--gateway-rows: unknown row "nginx"',
    );
    expect(() => parseArgs(['--callers', '1,0'])).toThrow('--callers needs a number >= 1, got 0');
    expect(() => parseArgs(['--callers', ''])).toThrow('--callers needs a comma-separated list');
  });
});

describe('the goals, judged from one run', () => {
  const results: GatewayResults = {
    'fs-gateway-2026': row({ frontUsPerCall: 150 }),
    'fs-gateway-full-2026': row({ frontUsPerCall: 300 }),
    'fs-mcp-proxy-2026': row({ frontUsPerCall: 750 }),
    'sdk-direct-2026': row({
      upstreamUsPerCall: 1000,
      upstreamRequestsPerCall: 1,
      latencyMs: { p50: 10, p99: 20 },
    }),
    'sdk-gateway-2026': row({
      frontUsPerCall: 400,
      upstreamRequestsPerCall: 5,
      latencyMs: { p50: 10.5, p99: 30 },
    }),
    'sdk2025-direct-2025': { skipped: true, reason: 'not installed' },
  };
  const goals = gatewayGoals(results, 32);
  const byName = Object.fromEntries(goals.map((g) => [g.goal, g]));

  it('judges each goal against its anchor in the same run', () => {
    expect(byName["stdio: gateway CPU/call ÷ mcp-proxy's, 2026 callers"]).toMatchObject({
      value: 0.2,
      met: true,
    });
    expect(byName["HTTP: gateway CPU/call ÷ SDK server's (straight), sdk-gateway-2026"]).toMatchObject({
      value: 0.4,
      met: true,
    });
    expect(byName['upstream requests per call, sdk-gateway-2026, 32 caller(s)']).toMatchObject({
      value: 5,
      met: false,
    });
    expect(byName['HTTP: added p50 ms, sdk-gateway-2026']).toMatchObject({ value: 0.5, met: true });
    expect(byName['HTTP: added p99 ms, sdk-gateway-2026']).toMatchObject({ value: 10, met: false });
    expect(byName['stdio: every control on ÷ one rule, gateway CPU/call']).toMatchObject({
      value: 2,
      met: false,
    });
  });

  it('says n/a, not met, when a row a goal needs was skipped or not run', () => {
    expect(byName["stdio: gateway CPU/call ÷ mcp-proxy's, 2025 callers"]?.met).toBeUndefined();
    expect(byName['HTTP: added p50 ms, sdk2025-gateway-2025']?.met).toBeUndefined();
    const lines = goalLines(goals);
    expect(lines.find((l) => l.includes('2025 callers'))).toMatch(/—\s+goal ≤ 0.25\s+n\/a$/);
    expect(lines.find((l) => l.includes('added p99 ms, sdk-gateway-2026'))).toMatch(
      /10\.00\s+goal ≤ 5\s+NOT MET$/,
    );
  });

  it('marks a verdict drawn from a window other processes disturbed', () => {
    const noisy = { ...results, 'fs-mcp-proxy-2026': row({ frontUsPerCall: 750, disturbed: true }) };
    const lines = goalLines(gatewayGoals(noisy, 32));
    expect(lines.find((l) => l.includes("mcp-proxy's, 2026"))).toMatch(
      /met \(disturbed window: do not quote\)$/,
    );
    expect(lines.find((l) => l.includes('every control on'))).not.toContain('disturbed');
  });

  it('prints a line per row and callers count, with the latency added to the straight call', () => {
    const table = gatewayTable(results, [32]);
    const line = table
      .split('\n')
      .find((l) => l.startsWith('mrtr gateway, 2026 caller') && l.includes('+0.50'));
    expect(line).toContain('+10.00');
    expect(table).toMatch(/SDK 1\.x server, straight\s+SKIPPED/);
  });
});

describe('the median of interleaved passes', () => {
  it('reports the median pass by calls/s and counts the errors of every pass', () => {
    const m = medianPoint([
      at({ callsPerSec: 900, frontUsPerCall: 1 }),
      at({ callsPerSec: 1100, frontUsPerCall: 3, errors: 2 }),
      at({ callsPerSec: 1000, frontUsPerCall: 2 }),
    ]);
    expect(m).toMatchObject({ callsPerSec: 1000, frontUsPerCall: 2, errors: 2 });
    expect(m.passes).toHaveLength(3);
  });
});
