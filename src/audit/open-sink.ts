// One place that turns an audit URL (`sqlite:PATH`, `postgres://…`, `jsonl:PATH`, `jsonl:-`) into a sink to write or
// a reader to read, so `mrtr serve --audit`, the `mrtr audit` commands and the docs speak the same syntax.
import { auditConfigError } from './errors.js';
import { JsonlAuditReader, JsonlAuditSink } from './jsonl-sink.js';
import { PostgresAuditReader, PostgresAuditSink } from './postgres-sink.js';
import type { AuditReader, AuditSink } from './sink.js';
import { SqliteAuditReader } from './sqlite-reader.js';
import { SqliteAuditSink, type SqliteAuditSinkOptions } from './sqlite-sink.js';

export const AUDIT_SYNTAX =
  'sqlite:PATH[?synchronous=full] | postgres://USER@HOST:PORT/DB | jsonl:PATH | jsonl:-';

type Parsed =
  | { kind: 'sqlite'; path: string; synchronous: 'normal' | 'full' | undefined }
  | { kind: 'postgres'; url: string }
  | { kind: 'jsonl'; path: string };

const SYNCHRONOUS = /\?synchronous=(\w*)$/;

function parseAuditUrl(spec: string): Parsed {
  if (spec.startsWith('sqlite:')) {
    let path = spec.slice('sqlite:'.length);
    let synchronous: 'normal' | 'full' | undefined;
    const m = SYNCHRONOUS.exec(path);
    if (m) {
      if (m[1] !== 'normal' && m[1] !== 'full')
        throw auditConfigError(`audit "${spec}": synchronous must be normal or full, got "${m[1]}"`);
      synchronous = m[1];
      path = path.slice(0, m.index);
    }
    if (path === '') throw auditConfigError(`audit "${spec}" names no file: expected sqlite:PATH`);
    return { kind: 'sqlite', path, synchronous };
  }
  if (spec.startsWith('postgres://') || spec.startsWith('postgresql://')) {
    try {
      new URL(spec);
    } catch {
      throw auditConfigError(`audit "${spec}" is not a valid PostgreSQL URL`);
    }
    return { kind: 'postgres', url: spec };
  }
  if (spec.startsWith('jsonl:')) {
    const path = spec.slice('jsonl:'.length);
    if (path === '') throw auditConfigError(`audit "${spec}" names no file: expected jsonl:PATH or jsonl:-`);
    return { kind: 'jsonl', path };
  }
  throw auditConfigError(`unknown audit sink "${spec}": expected ${AUDIT_SYNTAX}`);
}

export interface OpenAuditOptions {
  sqlite?: SqliteAuditSinkOptions;
  /** Rotate a JSON-lines file past this many bytes. */
  jsonlRotateBytes?: number;
}

export async function openAuditSink(spec: string, options: OpenAuditOptions = {}): Promise<AuditSink> {
  const p = parseAuditUrl(spec);
  if (p.kind === 'sqlite')
    return SqliteAuditSink.open(p.path, {
      ...options.sqlite,
      ...(p.synchronous !== undefined ? { synchronous: p.synchronous } : {}),
    });
  if (p.kind === 'postgres') return PostgresAuditSink.connect(p.url);
  return JsonlAuditSink.open(p.path, { rotateBytes: options.jsonlRotateBytes });
}

export async function openAuditReader(spec: string): Promise<AuditReader> {
  const p = parseAuditUrl(spec);
  if (p.kind === 'sqlite') return new SqliteAuditReader(p.path);
  if (p.kind === 'postgres') return PostgresAuditReader.connect(p.url);
  return JsonlAuditReader.open(p.path);
}
