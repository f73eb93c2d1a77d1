// chain() appends seq and prev to a record's JSON text instead of serialising a copy of the record again: the text
// it stores (and hashes) must be exactly JSON.stringify of the chained record, whatever the record holds.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { chain, GENESIS, unchainedText } from '../../src/audit/chain.js';
import { type ObservedRound, toAuditRecord } from '../../src/audit/record.js';
import { Redactor } from '../../src/audit/redact.js';

const redactor = new Redactor(Buffer.alloc(32, 7));

function round(overrides: Partial<ObservedRound>): ObservedRound {
  return {
    requestId: 1,
    method: 'tools/call',
    target: 'delete_file',
    arguments: { path: '/tmp/a' },
    principal: undefined,
    round: 1,
    flowId: undefined,
    inputResponses: undefined,
    inputRequests: undefined,
    outcome: 'complete',
    reason: undefined,
    decidedBy: undefined,
    startedAt: Date.UTC(2026, 11, 2),
    durationMs: 1.23456,
    ...overrides,
  };
}

const rounds: Array<[string, ObservedRound]> = [
  ['a first round with nothing optional', round({})],
  [
    'a principal with issuer and client, answers, steps, notes',
    round({
      principal: { subject: 'alice', issuer: 'https://idp.example', clientId: 'cli' },
      round: 2,
      flowId: 'AZrT3k2mQx9vB1cD4eF5gH',
      inputResponses: { confirm: { action: 'accept', content: { approve: true } } },
      steps: ['delete'],
      notes: { resource: 'vm-7', 'quote"d': 'line\nbreak \u2028 é 😀' },
    }),
  ],
  ['a principal with only a subject', round({ principal: { subject: 'bob' } })],
  [
    'a refusal with its reason, asked keys and a bridged client',
    round({
      requestId: 'req-"7"',
      outcome: 'refused',
      reason: 'state expired',
      decidedBy: 'codec',
      inputRequests: { confirm: { method: 'elicitation/create', params: { mode: 'form' } } },
      bridged: '2025-11-25',
    }),
  ],
  [
    'sensitive fields redacted at any depth',
    round({
      arguments: { user: 'carol', otp: '123456', nested: [{ otp: '654321' }] },
      inputResponses: { code: { action: 'accept', content: { otp: '111111' } } },
      sensitive: ['otp'],
    }),
  ],
  ['no arguments at all', round({ arguments: undefined, method: 'resources/read', target: 'file:///x' })],
];

describe('chain()', () => {
  it.each(rounds)('stores JSON.stringify of the chained record: %s', (_, observed) => {
    const record = toAuditRecord(observed, 'writer-1', redactor);
    const head = { seq: 41, hash: 'ab'.repeat(32) };
    const chained = chain(record, unchainedText(record), head);
    expect(chained.record.seq).toBe(42);
    expect(chained.record.prev).toBe(head.hash);
    expect(chained.text).toBe(JSON.stringify(chained.record));
    expect(JSON.parse(chained.text)).toEqual(JSON.parse(JSON.stringify(chained.record)));
    expect(chained.hash).toBe(createHash('sha256').update(chained.text).digest('hex'));
    // seq and prev come last, as the event schema in docs/audit.md lists them.
    expect(Object.keys(JSON.parse(chained.text)).slice(-2)).toEqual(['seq', 'prev']);
  });

  it('links each event to the previous one', () => {
    let head = { seq: 0, hash: GENESIS };
    const texts: string[] = [];
    for (const [, observed] of rounds) {
      const record = toAuditRecord(observed, 'writer-1', redactor);
      const chained = chain(record, unchainedText(record), head);
      expect(chained.record.prev).toBe(head.hash);
      head = { seq: chained.record.seq, hash: chained.hash };
      texts.push(chained.text);
    }
    expect(head.seq).toBe(rounds.length);
    expect(new Set(texts).size).toBe(rounds.length);
  });

  it('refuses, when observed, a record that has no JSON form', () => {
    const record = toAuditRecord(round({ notes: { big: 10n } }), 'writer-1', redactor);
    expect(() => unchainedText(record)).toThrow(/BigInt/);
  });
});

describe('toAuditRecord()', () => {
  it('keeps optional members out unless given, copies steps, and rounds the duration to the microsecond', () => {
    const steps = ['delete'];
    const bare = toAuditRecord(round({ principal: { subject: 'bob' }, steps }), 'writer-1', redactor);
    expect(bare.principal).toEqual({ sub: 'bob' });
    expect(Object.keys(bare.principal!)).toEqual(['sub']);
    expect('bridged' in bare).toBe(false);
    expect(bare.notes).toBeNull();
    expect(bare.answers).toBeNull();
    expect(bare.steps).toEqual(['delete']);
    expect(bare.steps).not.toBe(steps);
    expect(bare.durationMs).toBe(1.235);
    const full = toAuditRecord(
      round({
        principal: { subject: 'bob', issuer: 'https://idp.example', clientId: 'agent' },
        bridged: '2025-06-18',
        notes: { resource: 'vm-7' },
      }),
      'writer-1',
      redactor,
    );
    expect(full.principal).toEqual({ sub: 'bob', iss: 'https://idp.example', clientId: 'agent' });
    expect(full.bridged).toBe('2025-06-18');
    expect(full.notes).toEqual({ resource: 'vm-7' });
    expect(toAuditRecord(round({ steps: undefined }), 'writer-1', redactor).steps).toEqual([]);
  });

  it('redacts only when fields are marked sensitive, and digests the arguments keyed only then', () => {
    const args = { user: 'carol', otp: '123456' };
    const none = toAuditRecord(round({ arguments: args, sensitive: [] }), 'writer-1', redactor);
    expect(none.arguments).toEqual(args);
    expect(none.argumentsDigest).toBe(redactor.plain(args));
    expect(none.argumentsDigest).toMatch(/^sha256:/);
    const marked = toAuditRecord(
      round({ arguments: args, sensitive: ['otp'], notes: { otp: '123456', vm: 'vm-1' } }),
      'writer-1',
      redactor,
    );
    expect(marked.arguments).toEqual({ user: 'carol', otp: { $redacted: redactor.keyed('123456') } });
    expect(marked.argumentsDigest).toBe(redactor.keyed(args));
    expect(marked.notes).toEqual({ otp: { $redacted: redactor.keyed('123456') }, vm: 'vm-1' });
    // A sensitive field named but absent changes nothing, and the digest stays unkeyed.
    const absent = toAuditRecord(
      round({ arguments: { user: 'carol' }, sensitive: ['otp'] }),
      'writer-1',
      redactor,
    );
    expect(absent.argumentsDigest).toBe(redactor.plain({ user: 'carol' }));
  });
});
