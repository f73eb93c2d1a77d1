// What the audit trail needs of a place to keep events: append a batch (with a checkpoint) atomically and durably,
// say where a writer's chain stands, and read everything back for the CLI and the verifier.
import type { ChainedEvent, ChainHead } from './chain.js';
import type { StoredCheckpoint } from './checkpoint.js';

/** An event as read back: the stored columns, and the record's JSON exactly as stored. */
export interface StoredEvent {
  instance: string;
  seq: number;
  hash: string;
  text: string;
  /**
   * Columns a sink keeps beside the record for queries, as stored, by column name (`QUERY_COLUMNS` in tables.ts:
   * `time`, `flow_id`, `target`, `principal`, `outcome`); the verifier checks each against the record.
   */
  columns?: Readonly<Record<string, string | null>>;
  /**
   * Set by a reader for a row whose key it cannot read back as stored: an instance name that is not UTF-8 text, a seq
   * that is not a safe integer. Only an edited table holds one; the verifier names it, and a reader by pages stops
   * there (its next page could not start at that key).
   */
  problem?: string;
}

export interface EventFilter {
  flowId?: string;
  /** ISO time: events at or after it. */
  since?: string;
}

export interface AuditSink {
  /** `sqlite:PATH`, `postgres://…` (without a password), `jsonl:PATH`. */
  readonly description: string;
  /** True when a resolved append has reached stable storage (false: JSON lines, best effort). */
  readonly durable: boolean;
  /** Where `instance`'s chain stands in this sink, so that a restarted writer of that name continues it. */
  head(instance: string): Promise<ChainHead | undefined>;
  /** Store the events and the checkpoint in one transaction (all or nothing); resolves once they are durable. */
  append(events: readonly ChainedEvent[], checkpoint: StoredCheckpoint | undefined): Promise<void>;
  /** The verifier keys checkpoints were signed with, as the writers published them (`name+id+base64`). */
  publishKey(verifierKey: string): Promise<void>;
  close(): Promise<void>;
}

export interface AuditReader {
  readonly description: string;
  /** Events ordered by instance, then seq. */
  events(filter?: EventFilter): Promise<StoredEvent[]>;
  /**
   * Every event, ordered by instance then seq, at most `pageSize` at a time: what the verifier reads so that a trail
   * of any length fits in memory. A reader without it is read whole.
   */
  eventPages?(pageSize: number): AsyncIterable<StoredEvent[]>;
  checkpoints(): Promise<StoredCheckpoint[]>;
  /** Verifier keys the writers published in the sink (trusted only as far as the sink is). */
  publishedKeys(): Promise<string[]>;
  close(): Promise<void>;
}
