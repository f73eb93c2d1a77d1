// Checking an audit trail: every writer's chain link by link, every checkpoint's signature, and every checkpoint
// against the chain it seals. Stops at the first bad event, which it names.
import type { AuditVerifier } from './audit-key.js';
import { GENESIS, recordHash } from './chain.js';
import { readCheckpoint, type StoredCheckpoint } from './checkpoint.js';
import { IntentLinks } from './intent-links.js';
import type { AuditRecord } from './record.js';
import type { AuditReader, StoredEvent } from './sink.js';
import { columnDiffering } from './tables.js';

export interface VerifyInput {
  events: readonly StoredEvent[];
  /** Checkpoints kept in the sink itself. */
  stored: readonly StoredCheckpoint[];
  /** Signed notes kept elsewhere (`mrtr audit checkpoint`): they also catch a truncated tail. */
  exported?: readonly string[];
  /** Keys whose signatures count. */
  verifiers: readonly AuditVerifier[];
}

export interface ChainSummary {
  instance: string;
  events: number;
  headSeq: number;
  /** The highest sequence number a valid checkpoint seals (0: none). */
  sealedSeq: number;
  /**
   * Rounds whose intent no outcome claims: each began (its handler may have run) and its end was not recorded — a
   * process killed mid-round, or an outcome its sink refused. Not tampering; worth a look.
   */
  unfinished: number;
}

export interface BadEvent {
  instance: string;
  seq: number;
  problem: string;
  /** The only problem is a checkpoint signed by no key the verifier was given: an old key of the operator's, or a forgery. */
  unknownKey?: true;
}

export interface VerifyReport {
  ok: boolean;
  events: number;
  checkpoints: number;
  chains: ChainSummary[];
  firstBad: BadEvent | undefined;
}

function parseRecord(text: string): AuditRecord | undefined {
  try {
    const value = JSON.parse(text) as AuditRecord;
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The first problem of one chain's events (ordered by seq), or undefined; and the intents no outcome claims. */
function checkChain(
  instance: string,
  events: readonly StoredEvent[],
): { bad: BadEvent | undefined; unfinished: number } {
  const links = new IntentLinks();
  const bad = firstProblem(instance, events, links);
  return { bad, unfinished: links.unclaimed };
}

function firstProblem(
  instance: string,
  events: readonly StoredEvent[],
  links: IntentLinks,
): BadEvent | undefined {
  let expected = 1;
  let prev = GENESIS;
  for (const e of events) {
    const bad = (problem: string): BadEvent => ({ instance, seq: e.seq, problem });
    if (e.seq > expected)
      return {
        instance,
        seq: expected,
        problem:
          e.seq === expected + 1
            ? `event ${expected} is missing (deleted)`
            : `events ${expected}-${e.seq - 1} are missing (deleted)`,
      };
    const record = parseRecord(e.text);
    if (!record) return bad('the record is not JSON (edited)');
    if (record.instance !== e.instance || record.seq !== e.seq)
      return bad(
        `stored at ${e.instance} #${e.seq} but the record says ${record.instance} #${record.seq} (moved or reordered)`,
      );
    if (record.prev !== prev)
      return bad(`its prev does not match event ${e.seq - 1}'s hash (edited, inserted or reordered)`);
    if (recordHash(e.text) !== e.hash) return bad('its hash does not match its content (edited)');
    const differing = e.columns && columnDiffering(record, e.columns);
    if (differing) return bad(`its query column ${differing} differs from its record (edited)`);
    const unlinked = links.see(record);
    if (unlinked) return bad(unlinked);
    prev = e.hash;
    expected = e.seq + 1;
  }
  return undefined;
}

export function verifyTrail(input: VerifyInput): VerifyReport {
  const byInstance = new Map<string, StoredEvent[]>();
  for (const e of input.events) {
    const list = byInstance.get(e.instance);
    if (list) list.push(e);
    else byInstance.set(e.instance, [e]);
  }
  for (const list of byInstance.values()) list.sort((a, b) => a.seq - b.seq);
  const sealed = new Map<string, number>();
  // A checkpoint by an unknown key is the softer verdict (UNVERIFIED: perhaps an old key of the operator's), so it
  // is reported only when nothing else is wrong: a checkpoint anyone can forge must never hide a real tampering.
  let firstHard: BadEvent | undefined;
  let firstUnknownKey: BadEvent | undefined;
  const found = (bad: BadEvent) => {
    if (bad.unknownKey) firstUnknownKey ??= bad;
    else firstHard ??= bad;
  };
  const unfinished = new Map<string, number>();
  for (const [instance, list] of byInstance) {
    const checked = checkChain(instance, list);
    if (checked.bad) found(checked.bad);
    unfinished.set(instance, checked.unfinished);
  }
  const notes = [
    ...input.stored.map((c) => ({ note: c.note, from: 'stored' as const, row: c })),
    ...(input.exported ?? []).map((note) => ({ note, from: 'exported' as const, row: undefined })),
  ];
  for (const { note, from, row } of notes) {
    const aFrom = from === 'exported' ? 'an exported' : 'a stored';
    const reading = readCheckpoint(note, input.verifiers);
    if (!reading.ok) {
      found({
        instance: row?.instance ?? '?',
        seq: row?.seq ?? 0,
        problem: `${from} checkpoint: ${reading.problem}`,
        ...(reading.unknownKey ? { unknownKey: true as const } : {}),
      });
      continue;
    }
    const cp = reading.checkpoint;
    if (row && (row.instance !== cp.instance || row.seq !== cp.seq || row.hash !== cp.hash)) {
      found({
        instance: row.instance,
        seq: row.seq,
        problem: 'stored checkpoint columns differ from its signed note',
      });
      continue;
    }
    const list = byInstance.get(cp.instance) ?? [];
    const event = list.find((e) => e.seq === cp.seq);
    if (!event) {
      const last = list.at(-1)?.seq ?? 0;
      found({
        instance: cp.instance,
        seq: last + 1,
        problem: `the chain ends at ${last}, but ${aFrom} checkpoint seals ${cp.seq} events (tail truncated)`,
      });
      continue;
    }
    if (event.hash !== cp.hash) {
      const before = Math.max(
        0,
        ...[...sealed.entries()].filter(([i]) => i === cp.instance).map(([, s]) => s),
      );
      found({
        instance: cp.instance,
        seq: cp.seq,
        problem: `event ${cp.seq} is not the one ${aFrom} signed checkpoint sealed: history up to it was rewritten${before ? ` (after ${before}, the last seal that matches)` : ''}`,
      });
      continue;
    }
    sealed.set(cp.instance, Math.max(sealed.get(cp.instance) ?? 0, cp.seq));
  }
  const chains: ChainSummary[] = [...byInstance].map(([instance, list]) => ({
    instance,
    events: list.length,
    headSeq: list.at(-1)?.seq ?? 0,
    sealedSeq: sealed.get(instance) ?? 0,
    unfinished: unfinished.get(instance) ?? 0,
  }));
  const firstBad = firstHard ?? firstUnknownKey;
  return {
    ok: firstBad === undefined,
    events: input.events.length,
    checkpoints: notes.length,
    chains,
    firstBad,
  };
}

/**
 * What a verifier reads from a trail a server may still be writing: checkpoints first. Each checkpoint is committed
 * with the events it seals, so the events read afterwards include them; the other order could read a checkpoint newer
 * than the events read and report a truncated tail that is not there.
 */
export async function readForVerify(
  reader: Pick<AuditReader, 'checkpoints' | 'events'>,
): Promise<Pick<VerifyInput, 'events' | 'stored'>> {
  const stored = await reader.checkpoints();
  const events = await reader.events();
  return { events, stored };
}
