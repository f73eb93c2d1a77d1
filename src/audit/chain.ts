// The hash chain: each event carries the hash of its writer's previous event (`prev`), and its own hash is the
// SHA-256 of its JSON text exactly as stored. Editing, inserting, deleting or reordering an event breaks the link to
// the next one; rewriting the whole tail consistently is what signed checkpoints catch. The stored bytes are what is
// hashed (as CloudTrail hashes its log files), so a verifier in any language needs no JSON canonicalisation — only
// the bytes, which every sink keeps as text.
import { createHash } from 'node:crypto';
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

/** The hash of a stored record: SHA-256 (hex) of its JSON text. */
export function recordHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Give `event` the next place after `head`. */
export function chain(event: UnchainedRecord, head: ChainHead): ChainedEvent {
  const record = { ...event, seq: head.seq + 1, prev: head.hash } as AuditRecord;
  // JSON.stringify fails on what has no JSON form (a bigint note): that round fails alone.
  const text = JSON.stringify(record);
  return { record, hash: recordHash(text), text };
}
