// A verifiable bundle: a whole trail in one JSON file — every event as stored (with its query columns), every
// checkpoint, the verifier keys the writers published — to check on another machine with no access to the sink.
// A bundle read back is an AuditReader like any sink, so `mrtr audit verify --bundle FILE` runs the same checks as
// against the sink itself, and `flows`/`show` read it too. Keys inside a bundle are trusted only as far as the file is:
// give the verifier key you hold (`--vkey`).
import type { StoredCheckpoint } from './checkpoint.js';
import { AuditError } from './errors.js';
import type { AuditReader, EventFilter, StoredEvent } from './sink.js';
import { readForVerify } from './verify.js';

export const BUNDLE_FORMAT = 'mrtr-audit-bundle/1';

export interface AuditBundle {
  format: typeof BUNDLE_FORMAT;
  /** When it was made (ISO 8601). */
  exportedAt: string;
  /** The sink it was read from (`sqlite:…`, `postgres://…` without a password, `jsonl:…`). */
  source: string;
  /** Every event of every writer, ordered by writer then seq: whole chains, so every link can be checked. */
  events: StoredEvent[];
  checkpoints: StoredCheckpoint[];
  /** The verifier keys the writers published in the sink. */
  verifierKeys: string[];
}

/** The whole trail `reader` holds, as a bundle (checkpoints read first: see readForVerify). */
export async function exportBundle(reader: AuditReader, now: () => number = Date.now): Promise<AuditBundle> {
  const { events, stored } = await readForVerify(reader);
  return {
    format: BUNDLE_FORMAT,
    exportedAt: new Date(now()).toISOString(),
    source: reader.description,
    events: [...events],
    checkpoints: [...stored],
    verifierKeys: await reader.publishedKeys(),
  };
}

const corrupt = (where: string, what: string) =>
  new AuditError('ERR_AUDIT_CORRUPT', `${where} is not an mrtr audit bundle: ${what}`);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isSeq = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 1;

function readEvent(v: unknown, at: string, where: string): StoredEvent {
  if (!isObject(v)) throw corrupt(where, `${at} is not an object`);
  const { instance, seq, hash, text, columns } = v;
  if (typeof instance !== 'string' || !isSeq(seq) || typeof hash !== 'string' || typeof text !== 'string')
    throw corrupt(
      where,
      `${at} needs instance (string), seq (a whole number from 1), hash and text (strings)`,
    );
  const event: StoredEvent = { instance, seq, hash, text };
  if (columns !== undefined) {
    if (!isObject(columns) || !Object.values(columns).every((c) => c === null || typeof c === 'string'))
      throw corrupt(where, `${at}.columns must map column names to strings or null`);
    event.columns = columns as Record<string, string | null>;
  }
  return event;
}

function readCheckpointRow(v: unknown, at: string, where: string): StoredCheckpoint {
  if (!isObject(v)) throw corrupt(where, `${at} is not an object`);
  const { instance, seq, hash, note } = v;
  if (typeof instance !== 'string' || !isSeq(seq) || typeof hash !== 'string' || typeof note !== 'string')
    throw corrupt(
      where,
      `${at} needs instance (string), seq (a whole number from 1), hash and note (strings)`,
    );
  return { instance, seq, hash, note };
}

/** What the flows view filters on, read from the record itself. */
function factsOf(text: string): { flowId?: unknown; time?: unknown } {
  try {
    const value = JSON.parse(text) as unknown;
    return isObject(value) ? value : {};
  } catch {
    return {};
  }
}

export class BundleReader implements AuditReader {
  private constructor(
    readonly description: string,
    readonly bundle: AuditBundle,
  ) {}

  /** Read a bundle's text; `where` names it in errors (a file's path). Throws AuditError (ERR_AUDIT_CORRUPT). */
  static parse(text: string, where: string): BundleReader {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw corrupt(where, `not JSON (${(error as Error).message})`);
    }
    if (!isObject(value)) throw corrupt(where, 'not a JSON object');
    if (value.format !== BUNDLE_FORMAT)
      throw corrupt(where, `format must be "${BUNDLE_FORMAT}", got ${JSON.stringify(value.format)}`);
    const { exportedAt, source, events, checkpoints, verifierKeys } = value;
    if (typeof exportedAt !== 'string' || typeof source !== 'string')
      throw corrupt(where, 'exportedAt and source must be strings');
    if (!Array.isArray(events)) throw corrupt(where, 'events must be an array');
    if (!Array.isArray(checkpoints)) throw corrupt(where, 'checkpoints must be an array');
    if (!Array.isArray(verifierKeys) || !verifierKeys.every((k) => typeof k === 'string'))
      throw corrupt(where, 'verifierKeys must be an array of strings');
    const bundle: AuditBundle = {
      format: BUNDLE_FORMAT,
      exportedAt,
      source,
      events: events.map((e, i) => readEvent(e, `events[${i}]`, where)),
      checkpoints: checkpoints.map((c, i) => readCheckpointRow(c, `checkpoints[${i}]`, where)),
      verifierKeys: verifierKeys as string[],
    };
    return new BundleReader(`bundle:${where} (exported ${exportedAt} from ${source})`, bundle);
  }

  async events(filter: EventFilter = {}): Promise<StoredEvent[]> {
    return this.bundle.events
      .filter((e) => {
        if (filter.flowId === undefined && filter.since === undefined) return true;
        const facts = factsOf(e.text);
        if (filter.flowId !== undefined && facts.flowId !== filter.flowId) return false;
        return filter.since === undefined || (typeof facts.time === 'string' && facts.time >= filter.since);
      })
      .sort((a, b) => (a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : a.seq - b.seq));
  }

  async *eventPages(pageSize: number): AsyncIterable<StoredEvent[]> {
    // Already in memory: pages only keep the verifier's rhythm.
    const events = await this.events();
    for (let i = 0; i < events.length; i += pageSize) yield events.slice(i, i + pageSize);
  }

  async checkpoints(): Promise<StoredCheckpoint[]> {
    return [...this.bundle.checkpoints];
  }

  async publishedKeys(): Promise<string[]> {
    return [...this.bundle.verifierKeys];
  }

  async close(): Promise<void> {}
}
