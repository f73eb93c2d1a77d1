// Errors the audit room throws, each with a stable `code` to branch on.
import { MrtrError } from '../protocol/index.js';

export type AuditErrorCode =
  /** An audit URL, key or option is malformed. */
  | 'ERR_AUDIT_CONFIG'
  /** The sink could not store events (its promise rejects: the round's answer turns into -32603). */
  | 'ERR_AUDIT_UNAVAILABLE'
  /** What was read back is not an audit trail (a line that is not JSON): tampered with, or not ours. */
  | 'ERR_AUDIT_CORRUPT'
  /** The trail was closed; no event is accepted any more. */
  | 'ERR_AUDIT_CLOSED';

export class AuditError extends MrtrError {
  override readonly name = 'AuditError';
  declare readonly code: AuditErrorCode;
  constructor(code: AuditErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

export const auditConfigError = (message: string): AuditError => new AuditError('ERR_AUDIT_CONFIG', message);
