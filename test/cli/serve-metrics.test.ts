// `mrtr serve --metrics PORT`: a real server process, real flows, and /metrics read by a Prometheus text parser from
// npm. The counters match what was served; bad values of the flag are named.

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mcp } from '../helpers/mcp-http.js';
import { runCommand } from '../helpers/run-cli.js';
import { scrape } from '../helpers/scrape.js';
import { serveCli } from '../helpers/serve-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-serve-metrics-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KEYS = `k1:${Buffer.alloc(32, 5).toString('base64url')}`;

/** The URL the server printed for its metrics (`--metrics 0` takes a free port). */
const metricsUrl = (stderr: string) => /metrics at (\S+)/.exec(stderr)?.[1] as string;

const refuses = (...args: string[]) =>
  runCommand(process.execPath, ['dist/cli/main.js', 'serve', '--port', '0', ...args], {
    encoding: 'utf8',
    timeout: 25_000,
  });

describe('mrtr serve --metrics', () => {
  it('counts 3 flows of 3 rounds, their questions, a replay refusal and the audit writes', async () => {
    const server = await serveCli([
      '--port',
      '0',
      '--state-keys',
      KEYS,
      '--store',
      `sqlite:${join(dir, 'replay.db')}`,
      '--audit',
      `sqlite:${join(dir, 'audit.db')}`,
      '--metrics',
      '0',
    ]);
    const url = metricsUrl(server.stderr());
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const call = (params: Record<string, unknown>) =>
      mcp(server.url, 'tools/call', { name: 'resolve_bug', arguments: { id: 7 }, ...params });
    let replayed: { requestState: string; inputResponses: object } | undefined;
    for (let flow = 0; flow < 3; flow++) {
      const first = (await call({})).response.result!;
      expect(first.resultType).toBe('input_required');
      const fixed = { resolution: { action: 'accept', content: { resolution: 'Fixed' } } };
      const second = (await call({ requestState: first.requestState, inputResponses: fixed })).response
        .result!;
      expect(second.resultType).toBe('input_required');
      replayed ??= { requestState: first.requestState as string, inputResponses: fixed };
      const third = await call({
        requestState: second.requestState,
        inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
      });
      expect(third.response.result!.resultType).toBe('complete');
    }
    // A state already answered, presented with other answers once its flow completed: the replay guard refuses it.
    const other = { resolution: { action: 'accept', content: { resolution: "Won't fix" } } };
    const refused = await call({ requestState: replayed!.requestState, inputResponses: other });
    expect(refused.response.error?.code).toBe(-32602);

    const m = await scrape(url);
    expect(m.contentType).toContain('text/plain');
    const tool = { method: 'tools/call', tool: 'resolve_bug' };
    expect(m.value('mrtr_rounds_total', tool)).toBe(9);
    expect(m.value('mrtr_rounds_total', { ...tool, outcome: 'input_required' })).toBe(6);
    expect(m.value('mrtr_rounds_total', { ...tool, outcome: 'complete' })).toBe(3);
    // The refused round's tool name is the caller's word, not a checked one: it has no label of its own.
    expect(
      m.value('mrtr_rounds_total', { method: 'tools/call', tool: 'unchecked', outcome: 'refused' }),
    ).toBe(1);
    // A refused later round does not end a flow: three flows, all complete.
    expect(m.value('mrtr_flows_total')).toBe(3);
    expect(m.value('mrtr_flows_total', { ...tool, outcome: 'complete' })).toBe(3);
    expect(m.value('mrtr_questions_total', { kind: 'form' })).toBe(6);
    expect(m.value('mrtr_replay_refusals_total', { reason: 'flow_completed' })).toBe(1);
    expect(m.value('mrtr_control_decisions_total', { control: 'replay', decision: 'refused' })).toBe(1);
    expect(m.count('mrtr_round_duration_seconds', { method: 'tools/call' })).toBe(10);
    // Every round with an outcome was written to the trail before it was answered, and each handler's intent too.
    expect(m.count('mrtr_audit_write_seconds', { event: 'outcome' })).toBe(10);
    expect(m.count('mrtr_audit_write_seconds', { event: 'intent' })).toBe(9);
    expect(m.value('mrtr_audit_backlog_events')).toBe(0);
    expect(m.families.get('mrtr_round_duration_seconds')?.type).toBe('HISTOGRAM');
    await server.stop();
  });

  it('binds elsewhere with --metrics-host and answers 404 off /metrics', async () => {
    const server = await serveCli(['--port', '0', '--metrics', '0', '--metrics-host', '127.0.0.2']);
    const url = metricsUrl(server.stderr());
    expect(url).toMatch(/^http:\/\/127\.0\.0\.2:\d+\/metrics$/);
    expect((await fetch(url.replace(/\/metrics$/, '/other'))).status).toBe(404);
    const m = await scrape(url);
    expect(m.value('mrtr_rounds_total')).toBe(0);
    await server.stop();
  });

  it('names a bad --metrics value, a --metrics-host alone and a port in use', async () => {
    // Side by side: each is a whole mrtr start, and one after another they outlast a test on a busy machine.
    const bads = ['abc', '70000', '1.5', ''];
    const [alone, ...outs] = await Promise.all([
      refuses('--metrics-host', '0.0.0.0'),
      ...bads.map((bad) => refuses('--metrics', bad)),
    ]);
    for (const [i, out] of outs.entries()) {
      expect(out!.status).toBe(2);
      expect(out!.stderr).toContain(`mrtr serve: --metrics must be a port from 0 to 65535, got '${bads[i]}'`);
    }
    expect(alone!.status).toBe(2);
    expect(alone!.stderr).toContain('mrtr serve: --metrics-host needs --metrics PORT');
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
    const { port } = taken.address() as { port: number };
    try {
      const busy = await refuses('--metrics', String(port));
      expect(busy.status).toBe(2);
      expect(busy.stderr).toContain(
        `mrtr serve: --metrics ${port}: cannot listen on 127.0.0.1:${port}: the port is in use`,
      );
    } finally {
      taken.close();
    }
  });
});
