// What the gateway's rounds leave in the audit trail: who, which upstream and tool, the policy version, the
// definition digest, the decision and the rules behind it, and the upstream's latency and answer digest — for the
// rounds the gateway injects (consent) as for the forwarded ones, and for conditions that could not be evaluated,
// which refuse (fail closed) and name their rule. Read from an in-memory observer and from a real AuditTrail on a
// SQLite file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  type AuditRecord,
  AuditSigner,
  AuditTrail,
  SqliteAuditReader,
  SqliteAuditSink,
} from '../../src/audit/index.js';
import { flowsOf } from '../../src/audit/internal.js';
import { flowsTable, flowTimeline } from '../../src/cli/audit-format.js';
import { argumentsDigest } from '../../src/state/index.js';
import { type ChangingUpstream, startChangingUpstream } from './fixtures/changing-upstream.js';
import { answering, type Loose, textOf, useGateway, YES } from './fixtures/gateway-under-test.js';

const AUDIT_KEY = AuditSigner.generate('mrtr-gateway-audit-test');

let up: ChangingUpstream;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mrtr-gw-audit-'));
  up = await startChangingUpstream({
    write: { description: 'Write a file', inputSchema: { type: 'object' } },
    count: { description: 'Count things', inputSchema: { type: 'object' } },
    own: { description: 'Touch what you own', inputSchema: { type: 'object' } },
    drop: { description: 'Drop a table', inputSchema: { type: 'object' } },
  });
});
afterAll(async () => {
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

const RULES = `  - name: writers consent
    tools: ["up/write"]
    roles: [requester]
    require: [consent]
  - name: big counts only
    tools: ["up/count"]
    roles: ["*"]
    when: 'args.count > 5'
  - name: owners only
    tools: ["up/own"]
    roles: ["*"]
    when: 'args.owner == caller.subject'
  - name: anyone drops
    tools: ["up/drop"]
    roles: ["*"]
  - name: no large drops
    tools: ["up/drop"]
    when: 'args.rows > 1000'
    deny: true
`;

const gatewayNote = (notes: Loose) => notes?.gateway;

describe('a condition that cannot be evaluated', () => {
  it.each([
    ['a value of the wrong type', 'up__count', { count: 'x' }, 'big counts only'],
    ['a missing field', 'up__own', {}, 'owners only'],
    ['a deny rule whose field has the wrong type', 'up__drop', { rows: 'many' }, 'no large drops'],
  ])('refuses the call (%s) and the audit event names the rule', async (_, tool, args, rule) => {
    const g = await useGateway({ upstreamUrl: up.url, rules: RULES });
    const before = up.calls.length;
    const reply = await g.call('alice', tool, args);
    expect(reply.response.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(textOf(reply)).toBe("The gateway's policy could not decide on this call, so it refuses it.");
    expect(up.calls.length).toBe(before);
    const event = g.events.at(-1) as Loose;
    expect(event.target).toBe(tool);
    expect(gatewayNote(event.notes).decision).toMatchObject({
      allow: false,
      rule,
      reason: 'condition_error',
      detail: expect.stringContaining(`rule "${rule}": when:`),
    });
  });

  it('lets the same rules allow the calls their conditions do decide', async () => {
    const g = await useGateway({ upstreamUrl: up.url, rules: RULES });
    const before = up.calls.length;
    expect(textOf(await g.call('alice', 'up__count', { count: 9 }))).toBe('count ran with {"count":9}');
    expect(textOf(await g.call('alice', 'up__own', { owner: 'alice' }))).toBe(
      'own ran with {"owner":"alice"}',
    );
    expect(textOf(await g.call('alice', 'up__drop', { rows: 3 }))).toBe('drop ran with {"rows":3}');
    expect(textOf(await g.call('alice', 'up__count', { count: 2 }))).toBe(
      "The gateway's policy does not allow you to call this tool.",
    );
    expect(up.calls.length).toBe(before + 3);
  });
});

describe('the audit of gateway rounds', () => {
  it('records who, upstream, tool, policy version, definition digest, decision and rules on every round; the upstream latency and answer digest on completion', async () => {
    const path = join(dir, 'audit.db');
    const trail = await AuditTrail.open(await SqliteAuditSink.open(path), {
      key: AUDIT_KEY,
      instance: 'gw-1',
    });
    onTestFinished(() => trail.close());
    const g = await useGateway({ upstreamUrl: up.url, rules: RULES, observers: [trail] });
    const policy = g.gateway.policy.digest;
    const tools = await g.gateway.catalog.allTools({
      principal: undefined,
      signal: new AbortController().signal,
    });
    const definition = tools.find((t) => t.name === 'up__write')?.digest;
    expect(definition).toMatch(/^[\w-]{43}$/);

    const args = { path: '/srv/audited' };
    const first = (await g.call('alice', 'up__write', args)).response.result as Loose;
    const done = (await g.call('alice', 'up__write', args, answering(first, YES))).response.result as Loose;
    await g.call('alice', 'up__drop', { rows: 5000 });

    const decided = {
      upstream: 'up',
      tool: 'write',
      definition,
      policy,
      decision: { allow: true, rules: ['writers consent'], require: ['consent'] },
    };
    const [asked, completed, denied] = g.events.slice(-3) as Loose[];
    // The round the gateway injected: its consent question, before the upstream heard of the call.
    expect(asked).toMatchObject({ outcome: 'input_required', target: 'up__write', round: 0 });
    expect(asked.principal.subject).toBe('alice');
    expect(Object.keys(asked.inputRequests)).toEqual(['consent']);
    expect(asked.notes).toEqual({ gateway: decided });
    // The round that went upstream.
    expect(completed).toMatchObject({
      outcome: 'complete',
      target: 'up__write',
      round: 1,
      flowId: asked.flowId,
    });
    expect(completed.principal.subject).toBe('alice');
    expect(completed.notes.gateway).toEqual(decided);
    const { content } = done;
    expect(completed.notes.upstream).toEqual({
      name: 'up',
      tool: 'write',
      rounds: 1,
      latencyMs: expect.any(Number),
      answerDigest: argumentsDigest({ content }),
    });
    expect(completed.notes.upstream.latencyMs).toBeGreaterThanOrEqual(0);
    expect(completed.steps).toContain('mrtr/gateway/upstream-1');
    // A refusal names its rule.
    expect(denied).toMatchObject({
      outcome: 'denied',
      target: 'up__drop',
      reason: 'rule "no large drops" denies this call',
    });
    expect(denied.notes.gateway).toMatchObject({
      upstream: 'up',
      tool: 'drop',
      policy,
      decision: { allow: false, rule: 'no large drops', reason: 'denied', detail: null },
    });
    expect(denied.notes.upstream).toBeUndefined();

    // The real trail holds the same facts, durable before each round was answered.
    const reader = new SqliteAuditReader(path);
    onTestFinished(() => reader.close());
    const records = (await reader.events()).map((e) => JSON.parse(e.text) as AuditRecord);
    const outcomes = records.filter((r) => r.outcome !== 'proposed');
    expect(outcomes.map((r) => [r.target, r.outcome, r.principal?.sub])).toEqual([
      ['up__write', 'input_required', 'alice'],
      ['up__write', 'complete', 'alice'],
      ['up__drop', 'denied', 'alice'],
    ]);
    const [askedRecord, completedRecord, deniedRecord] = outcomes as Loose[];
    expect(askedRecord.asked).toEqual([{ key: 'consent', kind: 'elicitation.form' }]);
    expect(askedRecord.notes).toEqual({ gateway: decided });
    expect(completedRecord.notes).toEqual(JSON.parse(JSON.stringify(completed.notes)));
    expect(deniedRecord.notes.gateway.decision.rule).toBe('no large drops');
  });
});

describe('what the gateway decided, as the trail names it', () => {
  it('a policy deny reads denied with its rule, a declined consent reads declined, each as its flow outcome', async () => {
    const path = join(dir, 'decided.db');
    const trail = await AuditTrail.open(await SqliteAuditSink.open(path), {
      key: AUDIT_KEY,
      instance: 'gw-2',
    });
    onTestFinished(() => trail.close());
    const g = await useGateway({ upstreamUrl: up.url, rules: RULES, observers: [trail] });
    await g.call('alice', 'up__drop', { rows: 5000 });
    await g.call('alice', 'up__count', { count: 'x' });
    await g.call('bob', 'up__drop', { rows: 1 });
    const first = (await g.call('alice', 'up__write', { path: '/srv/no' })).response.result as Loose;
    const no = { action: 'decline' };
    const declined = await g.call('alice', 'up__write', { path: '/srv/no' }, answering(first, no));
    expect(declined.response.result).toMatchObject({ isError: true });

    const reader = new SqliteAuditReader(path);
    onTestFinished(() => reader.close());
    const records = (await reader.events()).map((e) => JSON.parse(e.text) as AuditRecord);
    const flows = flowsOf(records);
    expect(flows.map((f) => [f.target, f.outcome, f.reason])).toEqual([
      ['up__drop', 'denied', 'rule "no large drops" denies this call'],
      [
        'up__count',
        'denied',
        expect.stringMatching(
          /^rule "big counts only" could not be evaluated, so the call is refused \(rule "big counts only": when:/,
        ),
      ],
      ['up__drop', 'complete', null],
      ['up__write', 'declined', 'declined by the user'],
    ]);
    // `flows` names the decision and its reason whole, as the last column.
    const table = flowsTable(flows, { width: 80, color: false }).split('\n');
    expect(table[0]).toMatch(/OUTCOME\s+MS\s+WHY$/);
    expect(table[1]).toMatch(/\sdenied\s+[\d.]+\s+rule "no large drops" denies this call$/);
    expect(table[4]).toMatch(/\sdeclined\s+[\d.]+\s+declined by the user$/);
    // `show` prints the deciding rule whole, however narrow the terminal.
    const shown = flowTimeline(
      records.filter((r) => r.target === 'up__drop' && r.outcome === 'denied'),
      { width: 40, color: false },
    );
    expect(shown).toContain('reason     rule "no large drops" denies this call (by gateway_policy)');
  });
});
