// MrtrMetrics in process: the docs' example counts its rounds and serves them, the tool label stops growing at its
// cap, a 429 is counted from the round's event, and the timed audit observer keeps the trail's answers.
import { describe, expect, it } from 'vitest';
import { MrtrMetrics } from '../../src/metrics/index.js';
import { META } from '../helpers/mcp-http.js';
import { scrape } from '../helpers/scrape.js';

const round = (over: Record<string, unknown> = {}) => ({
  method: 'tools/call',
  target: 'ping',
  round: 0,
  outcome: 'complete',
  reason: undefined,
  decidedBy: undefined,
  inputRequests: undefined,
  notes: undefined,
  durationMs: 2,
  ...over,
});

describe('MrtrMetrics', () => {
  it('the example of docs/observability.md counts a call and serves it as Prometheus text', async () => {
    const { server, scrapes } = await import('../../examples/metrics.js');
    const env = { principal: undefined, signal: new AbortController().signal, notify() {} };
    const answer = await server.core.handle(
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ping', arguments: {}, _meta: META } },
      env,
    );
    expect(answer).toMatchObject({ result: { content: [{ type: 'text', text: 'pong' }] } });
    await new Promise<void>((done) => scrapes.listen(0, '127.0.0.1', done));
    try {
      const { port } = scrapes.address() as { port: number };
      const m = await scrape(`http://127.0.0.1:${port}/metrics`);
      expect(m.value('mrtr_rounds_total', { tool: 'ping', outcome: 'complete' })).toBe(1);
      expect(m.value('mrtr_flows_total', { tool: 'ping' })).toBe(1);
    } finally {
      scrapes.close();
    }
  });

  it('keeps the first tool names it sees and counts the rest as other', async () => {
    const metrics = new MrtrMetrics({ maxToolLabels: 2 });
    for (const target of ['a', 'b', 'c', 'd', 'a']) metrics.observer.observe(round({ target }));
    const text = await metrics.text();
    const tools = [...text.matchAll(/^mrtr_rounds_total\{[^}]*tool="([^"]+)"[^}]*\} (\d+)/gm)].map((m) => [
      m[1],
      m[2],
    ]);
    expect(tools).toEqual([
      ['a', '2'],
      ['b', '1'],
      ['other', '2'],
    ]);
  });

  it("gives no label of its own to a refused or failed round's made-up tool name, nor to a very long one", async () => {
    const metrics = new MrtrMetrics({ maxToolLabels: 2 });
    for (let i = 0; i < 5; i++) metrics.observer.observe(round({ target: `junk${i}`, outcome: 'refused' }));
    metrics.observer.observe(round({ target: 'nope', outcome: 'error' }));
    metrics.observer.observe(round({ target: 'x'.repeat(200) }));
    metrics.observer.observe(round({ target: 'real' }));
    const text = await metrics.text();
    expect(text).toContain('mrtr_rounds_total{method="tools/call",outcome="refused",tool="unchecked"} 5');
    expect(text).toContain('mrtr_rounds_total{method="tools/call",outcome="error",tool="unchecked"} 1');
    expect(text).toContain('tool="other"} 1');
    expect(text).toContain('mrtr_rounds_total{method="tools/call",outcome="complete",tool="real"} 1');
  });

  it('counts a denial the gateway policy both decided and noted once', async () => {
    const metrics = new MrtrMetrics();
    metrics.observer.observe(
      round({
        outcome: 'denied',
        decidedBy: 'gateway_policy',
        notes: { gateway: { decision: { allow: false, reason: 'no_rule' } } },
      }),
    );
    expect(await metrics.text()).toContain(
      'mrtr_control_decisions_total{control="gateway_policy",decision="denied"} 1',
    );
  });

  it('counts a 429 and the controls a round names', async () => {
    const metrics = new MrtrMetrics();
    metrics.observer.observe(
      round({ outcome: 'refused', reason: 'rate_limited', decidedBy: 'gateway_policy', httpStatus: 429 }),
    );
    metrics.observer.observe(
      round({
        outcome: 'input_required',
        inputRequests: {
          consent: {
            method: 'elicitation/create',
            params: { message: 'ok?', requestedSchema: {}, _meta: { 'dev.mrtr/humanRequired': 'consent' } },
          },
        },
      }),
    );
    metrics.observer.observe(round({ notes: { consent: { answer: 'yes' } } }));
    const text = await metrics.text();
    expect(text).toContain('mrtr_rate_limited_total{reason="rate_limited"} 1');
    expect(text).toContain('mrtr_control_decisions_total{control="gateway_policy",decision="refused"} 1');
    expect(text).toContain('mrtr_control_decisions_total{control="consent",decision="asked"} 1');
    expect(text).toContain('mrtr_control_decisions_total{control="consent",decision="allowed"} 1');
    expect(text).toContain('mrtr_questions_total{kind="form"} 1');
  });

  it('times the audit trail without changing its answers: a failed write is counted and still rejects', async () => {
    const metrics = new MrtrMetrics();
    const failure = new Error('disk full');
    const timed = metrics.timedAudit({
      observe: (e: { ok: boolean }) => (e.ok ? Promise.resolve() : Promise.reject(failure)),
      intend: () => undefined,
    });
    await timed.observe({ ok: true });
    await expect(timed.observe({ ok: false })).rejects.toBe(failure);
    expect(timed.intend?.({})).toBeUndefined();
    const text = await metrics.text();
    // Only durable writes are timed: a failure is counted on its own.
    expect(text).toContain('mrtr_audit_write_seconds_count{event="outcome"} 1');
    expect(text).toContain('mrtr_audit_write_seconds_count{event="intent"} 1');
    expect(text).toContain('mrtr_audit_write_failures_total{event="outcome"} 1');
  });
});
