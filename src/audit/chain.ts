// The hash chain: each event carries the hash of its writer's previous event, and its own hash is SHA-256 over its
// canonical JSON (RFC 8785 style, `prev` included). Editing, inserting, deleting or reordering an event breaks the
// link to the next one; rewriting the whole tail consistently is what signed checkpoints catch.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../state/index.js';
import type { AuditRecord, UnchainedRecord } from './record.js';

/** The `prev` of a writer's first event. */
export const GENESIS = '0'.repeat(64);

/** Where a writer's chain stands: its last event's sequence number and hash (0 and GENESIS before any). */
export interface ChainHead {
  seq: number;
  hash: string;
}

/** An event with its place in the chain, ready for a sink. `text` is the record's canonical JSON, as stored. */
export interface ChainedEvent {
  record: AuditRecord;
  hash: string;
  text: string;
}

export function recordHash(record: AuditRecord): string {
  return createHash('sha256').update(canonicalJson(record)).digest('hex');
}

/** Give `event` the next place after `head`. */
export function chain(event: UnchainedRecord, head: ChainHead): ChainedEvent {
  const record = { ...event, seq: head.seq + 1, prev: head.hash } as AuditRecord;
  // The canonical JSON is valid JSON: stored as it is hashed, it is serialised once.
  const text = canonicalJson(record);
  return { record, hash: createHash('sha256').update(text).digest('hex'), text };
}
