// The seam where the MRTR pipeline opens requestState before a handler runs and seals it after.
// Any codec that binds a token to the request it was minted for can sit behind this interface.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FlowJournal } from '../flow/index.js';

/** What a token is bound to: it must only open on a request with the same values. */
export interface StateBinding {
  /** Opaque digest of the authenticated principal ('' when anonymous). */
  principal: string;
  method: string;
  /** Tool name, prompt name or resource URI. */
  target: string;
  /** The request's arguments (tools/prompts) — a retry with other arguments must not open the state. */
  arguments: unknown;
}

/** What the server keeps inside the sealed state between rounds. */
export interface StateEnvelope {
  /** Keys of the inputRequests sent in the round that minted this state: only these answers are accepted. */
  asked: string[];
  /** One code per asked key ('f' form, 'u' url, 's' sampling, 'r' roots), so each answer is checked by kind. */
  kinds: string[];
  /** How many input_required rounds this flow has had so far (1 after the first). */
  round: number;
  /** Flow id: the same for every round of one call. */
  flow: string;
  /** The handler author's own state, if any. */
  data?: unknown;
  /** The sequential-flow journal (answers and steps so far), if the handler uses `ctx.ask`. */
  journal?: FlowJournal;
}

export type StateOpenFailure =
  | 'malformed'
  | 'too_large'
  | 'unknown_key'
  | 'auth_failed'
  | 'expired'
  | 'wrong_audience'
  | 'wrong_principal'
  | 'wrong_request'
  | 'unsupported_version';

export type StateOpenResult = { ok: true; envelope: StateEnvelope } | { ok: false; reason: StateOpenFailure };

export interface RequestStateCodec {
  seal(envelope: StateEnvelope, binding: StateBinding, ttlMs?: number): string;
  open(token: string, binding: StateBinding): StateOpenResult;
}

export function newFlowId(): string {
  return randomBytes(12).toString('base64url');
}

/**
 * First, signed-only implementation: HMAC-SHA256 over the JSON envelope and the binding.
 * The encrypted, key-rotating codec in `src/state/` replaces it as the default.
 */
export class HmacStateCodec implements RequestStateCodec {
  private readonly key: Buffer;
  private readonly maxBytes: number;
  constructor(key: Buffer = randomBytes(32), maxBytes = 8192) {
    this.key = key;
    this.maxBytes = maxBytes;
  }

  seal(envelope: StateEnvelope, binding: StateBinding, ttlMs = 600_000): string {
    const body = Buffer.from(JSON.stringify({ e: envelope, x: Date.now() + ttlMs })).toString('base64url');
    return `${body}.${this.mac(body, binding)}`;
  }

  open(token: string, binding: StateBinding): StateOpenResult {
    if (token.length > this.maxBytes) return { ok: false, reason: 'too_large' };
    const dot = token.indexOf('.');
    if (dot <= 0) return { ok: false, reason: 'malformed' };
    const body = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.mac(body, binding), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return { ok: false, reason: 'auth_failed' };
    try {
      const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as {
        e: StateEnvelope;
        x: number;
      };
      if (parsed.x < Date.now()) return { ok: false, reason: 'expired' };
      return { ok: true, envelope: parsed.e };
    } catch {
      return { ok: false, reason: 'malformed' };
    }
  }

  private mac(body: string, b: StateBinding): string {
    return createHmac('sha256', this.key)
      .update(JSON.stringify([b.principal, b.method, b.target, b.arguments ?? null]))
      .update('\0')
      .update(body)
      .digest('base64url');
  }
}
