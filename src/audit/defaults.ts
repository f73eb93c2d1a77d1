// The audit room's defaults, each with its reason.
export const AUDIT_DEFAULTS = Object.freeze({
  /** Seal a checkpoint after this many events: bounds how much history a key-less editor could rewrite unseen. */
  checkpointEvery: 1000,
  /** …or after this long with new events: a quiet server's tail is sealed within a minute, like a digest file. */
  checkpointIntervalMs: 60_000,
  /** Events waiting for the disk before new rounds wait for room: a full queue slows requests, never drops events. */
  maxQueuedEvents: 10_000,
  /** Events per transaction at most: one commit stays short even after a stall. */
  maxBatchEvents: 2_000,
  /** The name in a checkpoint's signature line (C2SP signed note key name). */
  keyName: 'mrtr-audit',
  /** A JSON-lines file is rotated once it grows past this (64 MiB): SIEM shippers handle files of this size well. */
  jsonlRotateBytes: 64 * 1024 * 1024,
});
