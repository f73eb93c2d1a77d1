// verifyTrail in process, one kind of tampering at a time, on events built by the writer's own chain(): the verdict,
// the first bad event it names (instance, seq, problem) and the chain summaries; after each test, verifyReader must
// give the very same reports reading the same events a page at a time. The CLI tests (tamper-sqlite,
// jsonl) make the same edits with sqlite3 on real files; these reach the verifier's every branch without a process.
import { afterEach, describe, expect, it } from 'vitest';
import { AuditSigner } from '../../src/audit/audit-key.js';
import { chain, GENESIS, recordHash, unchainedText } from '../../src/audit/chain.js';
import { type StoredCheckpoint, sealCheckpoint } from '../../src/audit/checkpoint.js';
import { toAuditRecord, toIntentRecord } from '../../src/audit/record.js';
import { Redactor } from '../../src/audit/redact.js';
import type { AuditReader, StoredEvent } from '../../src/audit/sink.js';
import { EVENT_COLUMNS, eventRow, QUERY_COLUMNS, queryColumnsOf } from '../../src/audit/tables.js';
import { type VerifyInput, type VerifyReport, verifyReader, verifyTrail } from '../../src/audit/verify.js';

const signer = AuditSigner.generate('mrtr-audit');
const redactor = new Redactor(Buffer.alloc(32, 3));
const NOW = new Date(Date.UTC(2026, 11, 2));

/** `n` events of one writer as a sink stores them (with query columns), and the chain's head after each. */
function writer(
  instance: string,
  n: number,
): { events: StoredEvent[]; heads: Array<{ seq: number; hash: string }> } {
  let head = { seq: 0, hash: GENESIS };
  const events: StoredEvent[] = [];
  const heads: Array<{ seq: number; hash: string }> = [];
  for (let i = 1; i <= n; i++) {
    const record = toAuditRecord(
      {
        requestId: i,
        method: 'tools/call',
        target: i % 2 ? 'delete_file' : 'read_file',
        arguments: { path: `/f${i}` },
        principal: { subject: 'alice' },
        round: 1,
        flowId: `flow-${i}`,
        inputResponses: undefined,
        inputRequests: undefined,
        outcome: 'complete',
        reason: undefined,
        decidedBy: undefined,
        startedAt: NOW.getTime() + i,
        durationMs: 1,
      },
      instance,
      redactor,
    );
    const c = chain(record, unchainedText(record), head);
    head = { seq: c.record.seq, hash: c.hash };
    heads.push(head);
    events.push({
      instance,
      seq: c.record.seq,
      hash: c.hash,
      text: c.text,
      columns: {
        time: c.record.time,
        flow_id: c.record.flowId,
        target: c.record.target,
        principal: c.record.principal?.sub ?? null,
        outcome: c.record.outcome,
      },
    });
  }
  return { events, heads };
}

const seal = (instance: string, head: { seq: number; hash: string }, by = signer): StoredCheckpoint =>
  sealCheckpoint(instance, head, by, NOW);

/** Re-hash an edited record text, as someone with write access but not the key would, keeping its row consistent. */
function rewritten(
  e: StoredEvent,
  edit: (record: Record<string, unknown>) => void,
  prev?: string,
): StoredEvent {
  const record = JSON.parse(e.text) as Record<string, unknown>;
  edit(record);
  if (prev !== undefined) record.prev = prev;
  const text = JSON.stringify(record);
  return { ...e, text, hash: recordHash(text) };
}

/** Every verdict of a test, checked again after it by verifyReader a page at a time (see afterEach). */
const verdicts: Array<{ input: VerifyInput; report: VerifyReport }> = [];

const verify = (events: StoredEvent[], stored: StoredCheckpoint[] = [], exported: string[] = []) => {
  const input = { events, stored, exported, verifiers: [signer.verifier] };
  const report = verifyTrail(input);
  // Copies: a test may edit its arrays after this verdict, for the next one.
  verdicts.push({
    input: { ...input, events: [...events], stored: [...stored], exported: [...exported] },
    report,
  });
  return report;
};

/**
 * A reader of `input`'s events that can only be read by pages (events() fails), in the order verifyTrail walks
 * them: writers in the order they first appear, each by seq.
 */
function pagedReader(input: VerifyInput, betweenPages: () => void): AuditReader {
  const byInstance = new Map<string, StoredEvent[]>();
  for (const e of input.events) byInstance.set(e.instance, [...(byInstance.get(e.instance) ?? []), e]);
  const ordered = [...byInstance.values()].flatMap((list) => [...list].sort((a, b) => a.seq - b.seq));
  return {
    description: 'paged',
    events: () => Promise.reject(new Error('read whole')),
    eventPages: async function* (pageSize) {
      for (let i = 0; i < ordered.length; i += pageSize) {
        const page = ordered.slice(i, i + pageSize);
        expect(page.length).toBeLessThanOrEqual(pageSize);
        yield page;
        betweenPages();
      }
    },
    checkpoints: async () => [...input.stored],
    publishedKeys: async () => [],
    close: async () => {},
  };
}

// The same trail read a page at a time gives the very same report, whatever the page size: one engine, two inputs.
afterEach(async () => {
  for (const { input, report } of verdicts.splice(0)) {
    for (const pageSize of [1, 2, 1000]) {
      let pagesYielded = 0;
      let pauses = 0;
      const paged = await verifyReader(
        pagedReader(input, () => pagesYielded++),
        {
          verifiers: input.verifiers,
          exported: input.exported ?? [],
          pageSize,
          betweenPages: async () => {
            pauses++;
          },
        },
      );
      expect(paged, `page size ${pageSize}`).toEqual(report);
      // Requests get in after every page.
      expect(pauses).toBe(Math.ceil(input.events.length / pageSize));
      expect(pagesYielded).toBe(pauses);
    }
  }
});

describe('verifyTrail', () => {
  it('finds an intact trail of two writers intact, in any stored order, and sums each chain', () => {
    const a = writer('a-1', 5);
    const b = writer('b-1', 3);
    const report = verify(
      [...b.events, ...a.events].reverse(),
      [seal('a-1', a.heads[2]!), seal('a-1', a.heads[4]!), seal('b-1', b.heads[2]!)],
      [seal('a-1', a.heads[4]!).note],
    );
    expect(report.firstBad).toBeUndefined();
    expect(report.ok).toBe(true);
    expect(report.events).toBe(8);
    expect(report.checkpoints).toBe(4);
    // In the order the writers first appear in the input.
    expect(report.chains).toEqual([
      { instance: 'a-1', events: 5, headSeq: 5, sealedSeq: 5, unfinished: 0 },
      { instance: 'b-1', events: 3, headSeq: 3, sealedSeq: 3, unfinished: 0 },
    ]);
  });

  it('names an edited event by its hash', () => {
    const { events } = writer('w-1', 4);
    events[2] = { ...events[2]!, text: events[2]!.text.replace('/f3', '/etc') };
    expect(verify(events).firstBad).toEqual({
      instance: 'w-1',
      seq: 3,
      problem: 'its hash does not match its content (edited)',
    });
  });

  it.each([
    ['time', { time: '2020-01-01T00:00:00.000Z' }],
    ['flow_id', { flow_id: 'flow-x' }],
    ['flow_id', { flow_id: null }],
    ['target', { target: 'harmless' }],
    ['principal', { principal: 'mallory' }],
    ['principal', { principal: null }],
    ['outcome', { outcome: 'refused' }],
  ])('names an event whose %s column was edited (%o)', (column, change) => {
    const { events } = writer('w-1', 3);
    events[1] = { ...events[1]!, columns: { ...events[1]!.columns!, ...change } };
    const report = verify(events);
    expect(report.ok).toBe(false);
    expect(report.firstBad).toEqual({
      instance: 'w-1',
      seq: 2,
      problem: `its query column ${column} differs from its record (edited)`,
    });
  });

  it('checks every query column of the table the sinks write by, and counts a column not read as differing', () => {
    // A column added to QUERY_COLUMNS is checked without a verifier edit: every one of them, edited, is caught.
    for (const { column } of QUERY_COLUMNS) {
      const { events } = writer('w-1', 2);
      events[0] = { ...events[0]!, columns: { ...events[0]!.columns!, [column]: 'edited' } };
      expect(verify(events).firstBad?.problem).toBe(
        `its query column ${column} differs from its record (edited)`,
      );
      const { [column]: _dropped, ...missing } = writer('w-1', 1).events[0]!.columns!;
      const [only] = writer('w-1', 1).events;
      expect(verify([{ ...only!, columns: missing }]).firstBad?.problem).toBe(
        `its query column ${column} differs from its record (edited)`,
      );
    }
    // And what a sink writes (eventRow) is what the verifier expects.
    const { events } = writer('w-1', 1);
    const e = events[0]!;
    const row = eventRow({ record: JSON.parse(e.text), hash: e.hash, text: e.text });
    const stored = Object.fromEntries(EVENT_COLUMNS.map((name, i) => [name, row[i]]));
    expect(verify([{ ...e, columns: queryColumnsOf(stored) }]).ok).toBe(true);
    expect(stored.principal).toBe('alice');
  });

  it('names a deleted event, and a deleted run of events', () => {
    const one = writer('w-1', 5).events;
    expect(verify(one.filter((e) => e.seq !== 3)).firstBad).toEqual({
      instance: 'w-1',
      seq: 3,
      problem: 'event 3 is missing (deleted)',
    });
    expect(verify(one.filter((e) => e.seq < 2 || e.seq > 4)).firstBad).toEqual({
      instance: 'w-1',
      seq: 2,
      problem: 'events 2-4 are missing (deleted)',
    });
    expect(verify(one.filter((e) => e.seq !== 1)).firstBad).toMatchObject({ seq: 1 });
  });

  it('names an event stored under another place than its record says', () => {
    const { events } = writer('w-1', 3);
    const other = writer('x-1', 3).events;
    events[1] = { ...other[1]!, instance: 'w-1' };
    expect(verify(events).firstBad).toEqual({
      instance: 'w-1',
      seq: 2,
      problem: 'stored at w-1 #2 but the record says x-1 #2 (moved or reordered)',
    });
    const renumbered = writer('w-1', 3).events;
    renumbered[2] = { ...renumbered[2]!, seq: 2 };
    renumbered[1] = { ...renumbered[1]!, seq: 3 };
    expect(verify(renumbered).firstBad).toEqual({
      instance: 'w-1',
      seq: 2,
      problem: 'stored at w-1 #2 but the record says w-1 #3 (moved or reordered)',
    });
  });

  it('names an event re-hashed after an edit by the broken link to it', () => {
    const { events } = writer('w-1', 4);
    events[1] = rewritten(events[1]!, (r) => {
      r.arguments = { path: '/tmp/harmless' };
    });
    expect(verify(events).firstBad).toEqual({
      instance: 'w-1',
      seq: 3,
      problem: "its prev does not match event 2's hash (edited, inserted or reordered)",
    });
  });

  it('names a second event stored under a seq, even one that links to the first as its successor would', () => {
    const { events, heads } = writer('w-1', 3);
    const twin = rewritten(events[2]!, (r) => Object.assign(r, { target: 'drop_table' }), heads[2]!.hash);
    const report = verify([...events, { ...twin, seq: 3 }], [seal('w-1', heads[2]!)]);
    expect(report.firstBad).toEqual({
      instance: 'w-1',
      seq: 3,
      problem: 'a second event is stored as #3 (inserted)',
    });
    expect(report.chains[0]).toMatchObject({ events: 4, headSeq: 3 });
  });

  it('names a record that is not JSON, or not a JSON object', () => {
    for (const text of ['{"v":1,', '42', 'null']) {
      const { events } = writer('w-1', 2);
      events[1] = { ...events[1]!, text, hash: recordHash(text) };
      expect(verify(events).firstBad, text).toEqual({
        instance: 'w-1',
        seq: 2,
        problem: 'the record is not JSON (edited)',
      });
    }
  });

  it('catches history rewritten consistently at the first checkpoint past it, naming the last seal that matches', () => {
    const { events, heads } = writer('w-1', 8);
    const stored = [seal('w-1', heads[1]!), seal('w-1', heads[4]!), seal('w-1', heads[7]!)];
    // Events 4.. rewritten and every hash after recomputed: the chain itself is consistent again.
    let prev = events[2]!.hash;
    for (let i = 3; i < 8; i++) {
      events[i] = rewritten(
        events[i]!,
        (r) => {
          r.arguments = { path: `/rewritten${i}` };
        },
        prev,
      );
      prev = events[i]!.hash;
    }
    const report = verify(events, stored);
    expect(report.firstBad).toEqual({
      instance: 'w-1',
      seq: 5,
      problem:
        'event 5 is not the one a stored signed checkpoint sealed: history up to it was rewritten (after 2, the last seal that matches)',
    });
    expect(report.chains[0]!.sealedSeq).toBe(2);
    // Against an exported checkpoint only, the wording says so, and there is no earlier matching seal to name.
    expect(verify(events, [], [seal('w-1', heads[7]!).note]).firstBad).toEqual({
      instance: 'w-1',
      seq: 8,
      problem: 'event 8 is not the one an exported signed checkpoint sealed: history up to it was rewritten',
    });
  });

  it('finds a truncated tail only against a checkpoint that seals it', () => {
    const { events, heads } = writer('w-1', 6);
    const kept = events.slice(0, 4);
    expect(verify(kept, [seal('w-1', heads[1]!)]).ok).toBe(true);
    expect(verify(kept, [], [seal('w-1', heads[5]!).note]).firstBad).toEqual({
      instance: 'w-1',
      seq: 5,
      problem: 'the chain ends at 4, but an exported checkpoint seals 6 events (tail truncated)',
    });
    expect(verify([], [], [seal('w-1', heads[5]!).note]).firstBad).toEqual({
      instance: 'w-1',
      seq: 1,
      problem: 'the chain ends at 0, but an exported checkpoint seals 6 events (tail truncated)',
    });
  });

  it('names a stored checkpoint whose columns differ from its signed note', () => {
    const { events, heads } = writer('w-1', 3);
    const good = seal('w-1', heads[2]!);
    for (const row of [
      { ...good, seq: 2 },
      { ...good, instance: 'x-1' },
      { ...good, hash: heads[1]!.hash },
    ]) {
      expect(verify(events, [row]).firstBad, JSON.stringify(row.seq)).toEqual({
        instance: row.instance,
        seq: row.seq,
        problem: 'stored checkpoint columns differ from its signed note',
      });
    }
  });

  it('names a stored and an exported checkpoint that do not read as signed notes', () => {
    const { events, heads } = writer('w-1', 2);
    const edited = { ...seal('w-1', heads[1]!) };
    edited.note = edited.note.replace('\n2\n', '\n3\n');
    expect(verify(events, [edited]).firstBad).toEqual({
      instance: 'w-1',
      seq: 2,
      problem: 'stored checkpoint: the signature by mrtr-audit does not verify',
    });
    expect(verify(events, [], ['hello\n']).firstBad).toEqual({
      instance: '?',
      seq: 0,
      problem: 'exported checkpoint: not a signed note (no blank line before the signatures)',
    });
  });

  it('reports a checkpoint by an unknown key as such, and only when nothing else is wrong', () => {
    const { events, heads } = writer('w-1', 4);
    const stranger = AuditSigner.generate('mrtr-audit');
    const strange = seal('w-1', heads[1]!, stranger);
    const alone = verify(events, [strange]).firstBad;
    expect(alone).toEqual({
      instance: 'w-1',
      seq: 2,
      problem: `stored checkpoint: no signature by a known audit key (signed by mrtr-audit+${stranger.verifier.id.toString('hex')} only)`,
      unknownKey: true,
    });
    // A truncated tail found by a later checkpoint wins over it too.
    const beyond = seal('w-1', { seq: 9, hash: heads[3]!.hash });
    expect(verify(events, [strange, beyond]).firstBad).toEqual({
      instance: 'w-1',
      seq: 5,
      problem: 'the chain ends at 4, but a stored checkpoint seals 9 events (tail truncated)',
    });
    // An edit later in the chain wins over it, though the unknown key's checkpoint is read first.
    events[3] = { ...events[3]!, text: events[3]!.text.replace('/f4', '/x') };
    expect(verify(events, [strange]).firstBad).toEqual({
      instance: 'w-1',
      seq: 4,
      problem: 'its hash does not match its content (edited)',
    });
  });
});

describe('intents and their outcomes', () => {
  const round = (requestId: number, target: string) => ({
    requestId,
    method: 'tools/call',
    target,
    arguments: { path: `/f${requestId}` },
    principal: { subject: 'alice' },
    round: 0,
    flowId: `flow-${requestId}`,
    inputResponses: undefined,
    sensitive: undefined,
    startedAt: NOW.getTime(),
  });
  /** A chain of intents and outcomes, each outcome linked to the intent at the seq given (as the writer links them). */
  function trail(steps: Array<['intent', number, string] | ['outcome', number, string, number | undefined]>) {
    let head = { seq: 0, hash: GENESIS };
    return steps.map((step): StoredEvent => {
      const record =
        step[0] === 'intent'
          ? toIntentRecord(round(step[1], step[2]), 'w-1', redactor)
          : toAuditRecord(
              {
                ...round(step[1], step[2]),
                inputRequests: undefined,
                outcome: 'complete',
                reason: undefined,
                decidedBy: undefined,
                durationMs: 1,
              },
              'w-1',
              redactor,
              step[3],
            );
      const c = chain(record, unchainedText(record), head);
      head = { seq: c.record.seq, hash: c.hash };
      return { instance: 'w-1', seq: c.record.seq, hash: c.hash, text: c.text };
    });
  }

  it('finds linked intents and outcomes intact, and counts the intents no outcome claims', () => {
    const report = verify(
      trail([
        ['intent', 1, 'delete_file'],
        ['intent', 2, 'read_file'],
        ['outcome', 2, 'read_file', 2],
        ['outcome', 1, 'delete_file', 1],
        ['intent', 3, 'delete_file'],
      ]),
    );
    expect(report.ok).toBe(true);
    expect(report.chains).toEqual([{ instance: 'w-1', events: 5, headSeq: 5, sealedSeq: 0, unfinished: 1 }]);
  });

  it.each([
    [
      'an intent that is not there',
      [['outcome', 1, 'delete_file', 7]],
      1,
      'its intentSeq 7 names no unclaimed intent',
    ],
    [
      'an event that is not an intent',
      [
        ['intent', 1, 'delete_file'],
        ['outcome', 1, 'delete_file', 1],
        ['outcome', 1, 'delete_file', 2],
      ],
      3,
      'its intentSeq 2 names no unclaimed intent',
    ],
    [
      'an intent claimed twice',
      [
        ['intent', 1, 'delete_file'],
        ['outcome', 1, 'delete_file', 1],
        ['outcome', 1, 'delete_file', 1],
      ],
      3,
      'its intentSeq 1 names no unclaimed intent',
    ],
    [
      "another request's intent",
      [
        ['intent', 1, 'delete_file'],
        ['outcome', 2, 'delete_file', 1],
      ],
      2,
      'its requestId differs from that of its intent #1',
    ],
    [
      'an intent for another tool',
      [
        ['intent', 1, 'read_file'],
        ['outcome', 1, 'delete_file', 1],
      ],
      2,
      'its target differs from that of its intent #1',
    ],
  ] as const)('names an outcome linked to %s', (_name, steps, seq, problem) => {
    const report = verify(trail(steps as unknown as Parameters<typeof trail>[0]));
    expect(report.ok).toBe(false);
    expect(report.firstBad).toMatchObject({ instance: 'w-1', seq });
    expect(report.firstBad!.problem).toContain(problem);
  });
});

describe('verifyReader', () => {
  it('reads a reader that cannot read by pages whole, in one page', async () => {
    const { events, heads } = writer('w-1', 3);
    let reads = 0;
    const whole: AuditReader = {
      description: 'whole',
      events: async () => {
        reads++;
        return events;
      },
      checkpoints: async () => [seal('w-1', heads[2]!)],
      publishedKeys: async () => [],
      close: async () => {},
    };
    let pauses = 0;
    const report = await verifyReader(whole, {
      verifiers: [signer.verifier],
      pageSize: 1,
      betweenPages: async () => {
        pauses++;
      },
    });
    expect(report).toMatchObject({ ok: true, events: 3, checkpoints: 1 });
    expect(report.chains).toEqual([{ instance: 'w-1', events: 3, headSeq: 3, sealedSeq: 3, unfinished: 0 }]);
    expect([reads, pauses]).toEqual([1, 1]);
  });
});
