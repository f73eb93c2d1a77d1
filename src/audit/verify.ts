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

/** One writer's chain as the walk has seen it so far. */
interface ChainWalk {
  events: number;
  headSeq: number;
  /** The seq the next event must have, and the hash its prev must name. */
  expected: number;
  prev: string;
  links: IntentLinks;
  /** The chain's first problem: the walk checks nothing of the chain after it (it still counts the events). */
  bad: BadEvent | undefined;
}

/** A checkpoint note, its signature already checked, and where it came from. */
interface NoteReading {
  from: 'stored' | 'exported';
  row: StoredCheckpoint | undefined;
  reading: ReturnType<typeof readCheckpoint>;
}

/**
 * The verifier, one event at a time: each chain's events must come in seq order, chains one after another or
 * interleaved. Only each chain's last link and the hashes the checkpoints name are kept, so a trail of any length
 * can be checked a page at a time.
 */
class TrailWalk {
  readonly #chains = new Map<string, ChainWalk>();
  readonly #notes: NoteReading[];
  /** The hashes of the events the checkpoints seal, by `instance` then seq (undefined until the walk meets it). */
  readonly #sealedHashes = new Map<string, Map<number, string | undefined>>();
  #events = 0;

  constructor(
    stored: readonly StoredCheckpoint[],
    exported: readonly string[],
    verifiers: readonly AuditVerifier[],
  ) {
    this.#notes = [
      ...stored.map((row) => ({
        from: 'stored' as const,
        row,
        reading: readCheckpoint(row.note, verifiers),
      })),
      ...exported.map((note) => ({
        from: 'exported' as const,
        row: undefined,
        reading: readCheckpoint(note, verifiers),
      })),
    ];
    for (const { reading } of this.#notes) {
      if (!reading.ok) continue;
      const { instance, seq } = reading.checkpoint;
      const wanted = this.#sealedHashes.get(instance) ?? new Map<number, string | undefined>();
      this.#sealedHashes.set(instance, wanted);
      wanted.set(seq, undefined);
    }
  }

  add(e: StoredEvent): void {
    this.#events++;
    let chain = this.#chains.get(e.instance);
    if (!chain) {
      chain = { events: 0, headSeq: 0, expected: 1, prev: GENESIS, links: new IntentLinks(), bad: undefined };
      this.#chains.set(e.instance, chain);
    }
    chain.events++;
    chain.headSeq = e.seq;
    const wanted = this.#sealedHashes.get(e.instance);
    // A second event under one seq breaks the chain whichever hash is kept here.
    if (wanted?.has(e.seq)) wanted.set(e.seq, e.hash);
    if (chain.bad) return;
    chain.bad = e.problem
      ? { instance: e.instance, seq: Number.isFinite(e.seq) ? e.seq : chain.expected, problem: e.problem }
      : checkLink(chain, e);
  }

  report(): VerifyReport {
    // A checkpoint by an unknown key is the softer verdict (UNVERIFIED: perhaps an old key of the operator's), so it
    // is reported only when nothing else is wrong: a checkpoint anyone can forge must never hide a real tampering.
    let firstHard: BadEvent | undefined;
    let firstUnknownKey: BadEvent | undefined;
    const found = (bad: BadEvent) => {
      if (bad.unknownKey) firstUnknownKey ??= bad;
      else firstHard ??= bad;
    };
    for (const chain of this.#chains.values()) if (chain.bad) found(chain.bad);
    const sealed = new Map<string, number>();
    for (const { from, row, reading } of this.#notes) {
      const aFrom = from === 'exported' ? 'an exported' : 'a stored';
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
      // The constructor made a place for every checkpoint that reads as signed.
      const hash = this.#sealedHashes.get(cp.instance)!.get(cp.seq);
      if (hash === undefined) {
        const last = this.#chains.get(cp.instance)?.headSeq ?? 0;
        found({
          instance: cp.instance,
          seq: last + 1,
          problem: `the chain ends at ${last}, but ${aFrom} checkpoint seals ${cp.seq} events (tail truncated)`,
        });
        continue;
      }
      if (hash !== cp.hash) {
        const before = sealed.get(cp.instance) ?? 0;
        found({
          instance: cp.instance,
          seq: cp.seq,
          problem: `event ${cp.seq} is not the one ${aFrom} signed checkpoint sealed: history up to it was rewritten${before ? ` (after ${before}, the last seal that matches)` : ''}`,
        });
        continue;
      }
      sealed.set(cp.instance, Math.max(sealed.get(cp.instance) ?? 0, cp.seq));
    }
    const chains: ChainSummary[] = [...this.#chains].map(([instance, chain]) => ({
      instance,
      events: chain.events,
      headSeq: chain.headSeq,
      sealedSeq: sealed.get(instance) ?? 0,
      unfinished: chain.links.unclaimed,
    }));
    const firstBad = firstHard ?? firstUnknownKey;
    return {
      ok: firstBad === undefined,
      events: this.#events,
      checkpoints: this.#notes.length,
      chains,
      firstBad,
    };
  }
}

/** The problem with `e` as the next link of `chain`, or undefined (and the chain moves on to it). */
function checkLink(chain: ChainWalk, e: StoredEvent): BadEvent | undefined {
  const { instance } = e;
  const bad = (problem: string): BadEvent => ({ instance, seq: e.seq, problem });
  const expected = chain.expected;
  if (e.seq > expected)
    return {
      instance,
      seq: expected,
      problem:
        e.seq === expected + 1
          ? `event ${expected} is missing (deleted)`
          : `events ${expected}-${e.seq - 1} are missing (deleted)`,
    };
  if (e.seq < expected) return bad(`a second event is stored as #${e.seq} (inserted)`);
  const record = parseRecord(e.text);
  if (!record) return bad('the record is not JSON (edited)');
  if (record.instance !== e.instance || record.seq !== e.seq)
    return bad(
      `stored at ${e.instance} #${e.seq} but the record says ${record.instance} #${record.seq} (moved or reordered)`,
    );
  if (record.prev !== chain.prev)
    return bad(`its prev does not match event ${e.seq - 1}'s hash (edited, inserted or reordered)`);
  if (recordHash(e.text) !== e.hash) return bad('its hash does not match its content (edited)');
  const differing = e.columns && columnDiffering(record, e.columns);
  if (differing) return bad(`its query column ${differing} differs from its record (edited)`);
  const unlinked = chain.links.see(record);
  if (unlinked) return bad(unlinked);
  chain.prev = e.hash;
  chain.expected = e.seq + 1;
  return undefined;
}

/** Verify events and checkpoints already in memory (a bundle, a test); events in any order. */
export function verifyTrail(input: VerifyInput): VerifyReport {
  const byInstance = new Map<string, StoredEvent[]>();
  for (const e of input.events) {
    const list = byInstance.get(e.instance);
    if (list) list.push(e);
    else byInstance.set(e.instance, [e]);
  }
  const walk = new TrailWalk(input.stored, input.exported ?? [], input.verifiers);
  for (const list of byInstance.values()) {
    list.sort((a, b) => a.seq - b.seq);
    for (const e of list) walk.add(e);
  }
  return walk.report();
}

export interface VerifyReaderOptions {
  /** Keys whose signatures count. */
  verifiers: readonly AuditVerifier[];
  /** Signed notes kept elsewhere (`mrtr audit checkpoint`). */
  exported?: readonly string[];
  /** Events read at a time (default 1,000). */
  pageSize?: number;
  /** Awaited between pages: a server yields to its requests there. */
  betweenPages?: () => Promise<void>;
}

/**
 * Verify the trail `reader` holds a page at a time: memory stays flat whatever the trail's length, and a server
 * that verifies between rounds answers its requests between pages. Checkpoints are read first (see readForVerify).
 */
export async function verifyReader(reader: AuditReader, options: VerifyReaderOptions): Promise<VerifyReport> {
  const stored = await reader.checkpoints();
  const walk = new TrailWalk(stored, options.exported ?? [], options.verifiers);
  for await (const page of pagesOf(reader, options.pageSize ?? 1000)) {
    for (const e of page) walk.add(e);
    await options.betweenPages?.();
  }
  return walk.report();
}

/** The reader's events a page at a time, in (instance, seq) order; one page when it cannot read by pages. */
function pagesOf(reader: AuditReader, pageSize: number): AsyncIterable<StoredEvent[]> {
  if (reader.eventPages) return reader.eventPages(pageSize);
  return (async function* () {
    yield await reader.events();
  })();
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
