// The link between a round's intent and its outcome, as the verifier checks it: an outcome's `intentSeq` must name
// a `proposed` event earlier in the same chain, of the same request (id, method, target, arguments' digest, flow and
// round), and no intent may be claimed twice. Intents no outcome claims are counted, not refused: a process killed
// mid-round, or an outcome the sink refused, leaves one, and it is the trail's honest record that the round began.
import type { AuditRecord } from './record.js';

const SAME: ReadonlyArray<keyof AuditRecord> = [
  'requestId',
  'method',
  'target',
  'argumentsDigest',
  'flowId',
  'round',
];

export class IntentLinks {
  /** Intents not yet claimed by an outcome, by seq. */
  readonly #open = new Map<number, AuditRecord>();

  /** Take one record of the chain, in seq order; the problem with its link, if any. */
  see(record: AuditRecord): string | undefined {
    if (record.outcome === 'proposed') {
      this.#open.set(record.seq, record);
      return undefined;
    }
    const seq = record.intentSeq;
    if (seq === undefined) return undefined;
    const intent = this.#open.get(seq);
    if (!intent)
      return `its intentSeq ${JSON.stringify(seq)} names no unclaimed intent before it in this chain (edited)`;
    const differing = SAME.find((key) => JSON.stringify(intent[key]) !== JSON.stringify(record[key]));
    if (differing) return `its ${differing} differs from that of its intent #${seq} (edited)`;
    this.#open.delete(seq);
    return undefined;
  }

  /** Intents no outcome has claimed so far. */
  get unclaimed(): number {
    return this.#open.size;
  }
}
