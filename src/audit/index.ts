// mrtr/audit: the audit trail — one event per round and per refusal, hash-chained per writer, sealed by signed
// checkpoints, durable before the round is answered. A curated list: what is not named here is internal.
export { AuditSigner, AuditVerifier } from './audit-key.js';
export { type AuditBundle, BUNDLE_FORMAT, BundleReader, exportBundle } from './bundle.js';
export { type ChainedEvent, type ChainHead, GENESIS, recordHash } from './chain.js';
export {
  type CheckpointReading,
  readCheckpoint,
  type StoredCheckpoint,
  sealCheckpoint,
} from './checkpoint.js';
export { AUDIT_DEFAULTS } from './defaults.js';
export { AuditError, type AuditErrorCode } from './errors.js';
export { type ExportProduct, OCSF_VERSION, toJsonLine, toOcsf } from './export.js';
export { JsonlAuditReader, JsonlAuditSink } from './jsonl-sink.js';
export { AUDIT_SYNTAX, type OpenAuditOptions, openAuditReader, openAuditSink } from './open-sink.js';
export { PostgresAuditReader, PostgresAuditSink } from './postgres-sink.js';
export {
  type AuditRecord,
  CONNECTION_EVENT,
  type ObservedConnectionEvent,
  type ObservedDefinitionChange,
  type ObservedRound,
  TOOL_DEFINITION_CHANGED,
} from './record.js';
export { REDACTED } from './redact.js';
export type { AuditReader, AuditSink, EventFilter, StoredEvent } from './sink.js';
export { SqliteAuditReader } from './sqlite-reader.js';
export { SqliteAuditSink, type SqliteAuditSinkOptions } from './sqlite-sink.js';
export { AuditTrail, type AuditTrailOptions } from './trail.js';
export {
  type BadEvent,
  type ChainSummary,
  type VerifyInput,
  type VerifyReaderOptions,
  type VerifyReport,
  verifyReader,
  verifyTrail,
} from './verify.js';
