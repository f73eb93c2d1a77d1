// The hash chain: each event carries the hash of its writer's previous event (`prev`), and its own hash is the
// SHA-256 of its JSON text exactly as stored. Editing, inserting, deleting or reordering an event breaks the link to
// the next one; rewriting the whole tail consistently is what signed checkpoints catch. The stored bytes are what is
// hashed (as CloudTrail hashes its log files), so a verifier in any language needs no JSON canonicalisation — only
// the bytes, which every sink keeps as text.
import crypto, { createHash } from 'node:crypto';
import type { AuditRecord, UnchainedRecord } from './record.js';

/** The `prev` of a writer's first event. */
export const GENESIS = '0'.repeat(64);

/** Where a writer's chain stands: its last event's sequence number and hash (0 and GENESIS before any). */
export interface ChainHead {
  seq: number;
  hash: string;
}

/** An event with its place in the chain, ready for a sink. `text` is the record's JSON, as stored and hashed. */
export interface ChainedEvent {
  record: AuditRecord;
  hash: string;
  text: string;
}

// crypto.hash (Node >= 20.12) hashes without a Hash object: half the cost of createHash for a record this size.
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;

/** The hash of a stored record: SHA-256 (hex) of its JSON text. */
export function recordHash(text: string): string {
  return oneShotHash ? oneShotHash('sha256', text, 'hex') : createHash('sha256').update(text).digest('hex');
}

/**
 * An event's JSON text without its place in the chain: made when the round is observed, so that a record with no
 * JSON form (a bigint note) fails its own round there and never takes a place in the chain.
 */
export function unchainedText(event: UnchainedRecord): string {
  return JSON.stringify(event);
}

/**
 * Give `event` the next place after `head`. The record is the writer's own, so it takes `seq` and `prev` in place;
 * its text is `unchained` with those two members appended — what JSON.stringify of the chained record gives — which
 * spares a copy and a second serialisation of the whole record per event.
 */
export function chain(event: UnchainedRecord, unchained: string, head: ChainHead): ChainedEvent {
  const record = event as AuditRecord;
  record.seq = head.seq + 1;
  record.prev = head.hash;
  const text = `${unchained.slice(0, -1)},"seq":${record.seq},"prev":"${record.prev}"}`;
  return { record, hash: recordHash(text), text };
}
