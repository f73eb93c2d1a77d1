// A small server with the audit trail on, for the audit tests: a consent flow with a step and a note, a sign-in
// whose password is marked sensitive, and helpers that drive rounds through the core without HTTP.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { z } from 'zod';
import type { ChainedEvent, StoredCheckpoint } from '../../src/audit/index.js';
import {
  type AuditReader,
  type AuditRecord,
  AuditSigner,
  type AuditSink,
  AuditTrail,
  type AuditTrailOptions,
  SqliteAuditReader,
  type StoredEvent,
  type VerifyReport,
  verifyReader,
  verifyTrail,
} from '../../src/audit/index.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../src/protocol/index.js';
import { McpServer, type McpServerOptions, text } from '../../src/server/index.js';
import { Keyring } from '../../src/state/index.js';
import { META } from '../helpers/mcp-http.js';

export const quiet = { info() {}, warn() {}, error() {} };
export const env = { principal: undefined, signal: new AbortController().signal, notify() {} };
export const KEYS = Keyring.fromSpec(`k1:${Buffer.alloc(32, 7).toString('base64url')}`);
/** One audit key for the tests: a fixed one would do as well, a generated one shows nothing depends on its bytes. */
export const AUDIT_KEY = AuditSigner.generate('mrtr-audit-test');

export function tempDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'mrtr-audit-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function auditedServer(trail: AuditTrail, options: Partial<McpServerOptions> = {}): McpServer {
  return new McpServer({
    name: 'audited',
    version: '1',
    stateKeys: KEYS,
    logger: quiet,
    observers: [trail],
    ...options,
  })
    .tool(
      {
        name: 'delete_file',
        description: 'Deletes a file after consent',
        input: z.object({ path: z.string() }),
      },
      async ({ path }, ctx) => {
        ctx.audit.note({ resource: path });
        if (!(await ctx.ask.confirm(`Delete ${path}?`, { key: 'consent' }))) return text('kept');
        await ctx.ask.step('delete', () => `deleted ${path}`);
        return text(`deleted ${path}`);
      },
    )
    .tool(
      { name: 'sign_in', description: 'Asks for a password', sensitive: ['password'] },
      async (_args, ctx) => {
        const { user } = await ctx.ask.form('Sign in', z.object({ user: z.string(), password: z.string() }), {
          key: 'credentials',
        });
        return text(`hello ${user}`);
      },
    )
    .tool({ name: 'broken', description: 'Fails' }, () => {
      throw new Error('boom');
    });
}

export const call = (id: number, name: string, params: Record<string, unknown> = {}): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { _meta: META, name, ...params },
});

export const stateOf = (response: JsonRpcResponse): string =>
  (response as unknown as { result: { requestState: string } }).result.requestState;

export const accept = (content: Record<string, unknown>) => ({ action: 'accept', content });

/** A sink around another that counts batches and can hold them (explicit signals, no time windows). */
export class HeldSink implements AuditSink {
  readonly batches: Array<{ events: readonly ChainedEvent[]; checkpoint: StoredCheckpoint | undefined }> = [];
  /** Events the inner sink has stored (durable), in order. */
  readonly stored: ChainedEvent[] = [];
  held: Promise<void> | undefined;
  failNext: Error | undefined;
  /** Fails every batch it returns an error for (e.g. only batches holding an outcome, not an intent). */
  failWhen: ((events: readonly ChainedEvent[]) => Error | undefined) | undefined;
  constructor(readonly inner: AuditSink) {}
  get description() {
    return this.inner.description;
  }
  get durable() {
    return this.inner.durable;
  }
  head(instance: string) {
    return this.inner.head(instance);
  }
  publishKey(key: string) {
    return this.inner.publishKey(key);
  }
  async append(events: readonly ChainedEvent[], checkpoint: StoredCheckpoint | undefined) {
    this.batches.push({ events, checkpoint });
    if (this.held) await this.held;
    if (this.failNext) {
      const error = this.failNext;
      this.failNext = undefined;
      throw error;
    }
    const failure = this.failWhen?.(events);
    if (failure) throw failure;
    await this.inner.append(events, checkpoint);
    this.stored.push(...events);
  }
  close() {
    return this.inner.close();
  }
}

/** Every record an SQLite audit file holds, in chain order. */
export async function recordsIn(path: string): Promise<AuditRecord[]> {
  const reader = new SqliteAuditReader(path);
  try {
    return (await reader.events()).map((e) => JSON.parse(e.text) as AuditRecord);
  } finally {
    await reader.close();
  }
}

/** The outcome events of a trail, without the `proposed` intents written before each handler ran. */
export const outcomes = <R extends { outcome: string }>(records: readonly R[]): R[] =>
  records.filter((r) => r.outcome !== 'proposed');

export function openTrail(sink: AuditSink, options: AuditTrailOptions = {}): Promise<AuditTrail> {
  return AuditTrail.open(sink, { key: AUDIT_KEY, instance: 'test-1', ...options });
}

/**
 * What every reader's pages must be: the events `events()` gives, in its order, never more than `pageSize` at a
 * time, ending early only after an event with a problem (a key that does not read back, a second row under a key);
 * and verifyReader over them says what verifyTrail says over the whole trail in memory.
 */
export async function expectPagesAgree(reader: AuditReader, pageSize: number): Promise<VerifyReport> {
  const whole = await reader.events();
  const pages: StoredEvent[][] = [];
  for await (const page of reader.eventPages!(pageSize)) pages.push(page);
  for (const page of pages) expect(page.length).toBeGreaterThan(0);
  for (const page of pages) expect(page.length).toBeLessThanOrEqual(pageSize);
  const read = pages.flat();
  const stopped = read.at(-1)?.problem !== undefined;
  const rows = (events: StoredEvent[]) =>
    events.map(({ instance, seq, hash, text }) => ({ instance, seq, hash, text }));
  expect(rows(read)).toEqual(rows(stopped ? whole.slice(0, read.length) : whole));
  const verifiers = [AUDIT_KEY.verifier];
  const paged = await verifyReader(reader, { verifiers, pageSize });
  const inMemory = verifyTrail({ events: whole, stored: await reader.checkpoints(), verifiers });
  // Stopped early, the chains after the bad event are not read: the verdict and the bad event are the same.
  if (stopped)
    expect({ ok: paged.ok, firstBad: paged.firstBad }).toEqual({
      ok: inMemory.ok,
      firstBad: inMemory.firstBad,
    });
  else expect(paged).toEqual(inMemory);
  return paged;
}
