import * as crypto from 'node:crypto';
import { createCipheriv, createDecipheriv, createHash, type KeyObject, randomFillSync } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { decodeBase64urlStrict, isCanonicalBase64url } from './base64url.js';
import { canonicalJson } from './canonical-json.js';
import { StateRangeError, StateTooLargeError, StateUsageError } from './errors.js';
import {
  type DerivedKey,
  type Keyring,
  keyringInternals,
  type Principal,
  principalText,
  STATE_FORMAT_VERSION,
} from './keyring.js';
import { deriveSubkey, hmacSha256, macMatches } from './signing.js';

/*
 * Token v1 (base64url of):
 *   header (cleartext, authenticated as AAD)
 *     [0]      format version (1)
 *     [1]      high nibble: flags (0x10 payload deflated, 0x20 flow id stored as 16 raw bytes); low nibble: kid length - 1
 *     [2..]    kid (ASCII)
 *   session    16 random bytes naming a session key HMAC-SHA256(kid's AEAD key, session)
 *   nonce      12 random bytes
 *   ciphertext AES-256-GCM of the body below, under the session key
 *   tag        16 bytes
 * body
 *   issuedAt   uint48 big-endian, ms since epoch
 *   ttl        varint, ms
 *   round      varint
 *   flowId     16 raw bytes (flag 0x20) or 1 length byte + UTF-8
 *   audience tag 8 | principal tag 8   (HMAC-SHA256 under the kid's binding key, truncated, cached)
 *   request tag 16   (SHA-256 of principal + method + target + canonical arguments, truncated; it covers the
 *              principal too, so a successful open needs one digest, not two)
 *   payload    JSON UTF-8, deflate-raw'd when flag 0x10
 * Binding tags sit inside the ciphertext rather than in the AAD so a mismatch can be told apart from tampering.
 * Session keys keep AES-GCM far below its ~2^32 messages-per-key limit for random 96-bit nonces: a sealing process
 * draws a new session after SESSION_SEALS seals, so no key ever sees more than that many nonces, however busy the
 * fleet. Deriving a key per session rather than per token saves an HMAC on every seal and, through a small cache
 * of sessions that authenticated, on nearly every open.
 */

/** The codec's defaults, each the safe choice: a caller who sets nothing gets the conservative codec. */
export const STATE_CODEC_DEFAULTS = Object.freeze({
  /** A round's state is small (asked keys, a journal of short answers); 8 KiB bounds what a client can make us decode. */
  maxTokenBytes: 8 * 1024,
  /** Bounds the payload before compression, so inflating a token can never take more memory than this. */
  maxPayloadBytes: 256 * 1024,
  /** Long enough for a person to answer a question, short enough that a leaked state soon stops working. */
  defaultTtlMs: 10 * 60 * 1000,
  /** Clocks across a fleet differ by seconds, not minutes. */
  maxClockSkewMs: 60 * 1000,
  /**
   * Off: sealed journals mix client-chosen answers with handler data, and with compression the token length would
   * tell a client replaying states something about that data (a CRIME-style oracle).
   */
  compression: false,
});
/** Longest TTL a seal accepts (uint32 ms, about 49.7 days). */
export const MAX_TTL_MS = 0xffff_ffff;
/** Largest round number a seal accepts. */
export const MAX_ROUND = 0xffff_ffff;
const MAX_FLOW_ID_BYTES = 128;

const FLAG_DEFLATE = 0x10;
const FLAG_RAW_FLOW = 0x20;
const KNOWN_FLAGS = FLAG_DEFLATE | FLAG_RAW_FLOW;
const SESSION_BYTES = 16;
/** Seals under one session key before a new session is drawn (nonce collisions stay below ~2^-40). */
const SESSION_SEALS = 2 ** 28;
/** Session keys remembered for opening; only sessions that authenticated a token are remembered. */
const SESSION_CACHE_SIZE = 1024;
const NONCE_BYTES = 12;
const GCM_TAG_BYTES = 16;
const AUD_TAG = 8;
const PRN_TAG = 8;
const REQ_TAG = 16;
const BIND_TAGS = AUD_TAG + PRN_TAG + REQ_TAG;
// issuedAt + ttl varint + round varint + shortest flow id (len byte + 1) + tags + 1 payload byte
const MIN_BODY_BYTES = 6 + 1 + 1 + 2 + BIND_TAGS + 1;
// Below this, deflate never wins on JSON; skip the attempt.
const DEFLATE_MIN_BYTES = 96;
const MAX_UINT48 = 2 ** 48 - 1;
// zlib's default 16 KiB output chunk is mostly garbage for payloads capped near 8 KiB compressed.
const ZLIB_OPTIONS = { chunkSize: 4096 } as const;

const DOMAIN_AUDIENCE = 'mrtr.aud\0';
const DOMAIN_PRINCIPAL = 'mrtr.prn\0';
const PRINCIPAL_CACHE_SIZE = 1024;
const DOMAIN_REQUEST = 'mrtr.req\0';

/** Why a token did not open. For logs and audit only: the wire answer is always one -32602 "invalid requestState". */
export type OpenFailureReason =
  | 'malformed'
  | 'too_large'
  | 'unknown_key'
  | 'auth_failed'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_audience'
  | 'wrong_principal'
  | 'wrong_request'
  | 'unsupported_version';

export const OPEN_FAILURE_REASONS: readonly OpenFailureReason[] = Object.freeze([
  'malformed',
  'too_large',
  'unknown_key',
  'auth_failed',
  'expired',
  'not_yet_valid',
  'wrong_audience',
  'wrong_principal',
  'wrong_request',
  'unsupported_version',
]);

/** What a state is bound to; the same binding must be presented to `open` as was given to `seal`. */
export interface StateBinding {
  /**
   * The authenticated principal. Prefer the Principal object (the codec keys its digest per kid, so it
   * survives key rotation); a string is taken as an opaque, stable principal id. Absent/null = anonymous,
   * which only opens as anonymous.
   */
  principal?: Principal | string | null;
  /** JSON-RPC method, e.g. 'tools/call'. */
  method: string;
  /** Tool name, prompt name or resource URI. */
  target: string;
  /** Request arguments, bound by canonical JSON. `undefined` differs from `{}` and `null`. */
  arguments?: unknown;
}

export interface SealOptions {
  /** Flow id carried through every round; a random 128-bit id (22 base64url characters) when absent. */
  flowId?: string;
  /** Round number this state was issued at (default 1). */
  round?: number;
  /** Lifetime of this state in ms (default: the codec's defaultTtlMs). */
  ttlMs?: number;
}

export interface OpenedState<T = unknown> {
  payload: T;
  flowId: string;
  round: number;
  /** ms since epoch. */
  issuedAt: number;
  /** ms since epoch; the state is expired from this instant on. */
  expiresAt: number;
  /** Key id the state was sealed under. */
  kid: string;
  /** False when sealed under an accepted, non-current key (a rotation is in progress). */
  currentKey: boolean;
}

export type OpenResult<T = unknown> =
  | { readonly ok: true; readonly state: OpenedState<T> }
  | { readonly ok: false; readonly reason: OpenFailureReason };

export interface StateCodecOptions {
  keyring: Keyring;
  /** This server's id. State sealed for one audience never opens for another. */
  audience: string;
  /** Cap on the token's length in characters (= bytes; base64url is ASCII), checked before decoding. */
  maxTokenBytes?: number;
  /** Cap on the payload's JSON in bytes before compression (also bounds decompression). */
  maxPayloadBytes?: number;
  defaultTtlMs?: number;
  /**
   * How far in the future a state's issue time may lie, for clocks that differ across a fleet (default 60 s). A
   * state issued later than that was sealed by an instance whose clock runs ahead, and would otherwise live longer
   * than its TTL here; it is refused as 'not_yet_valid'.
   */
  maxClockSkewMs?: number;
  /**
   * Deflate the payload when that makes the token smaller (default false). Turn on only when no payload mixes
   * secrets with attacker-chosen text: the token length is observable (compression-oracle attacks, CRIME-style).
   */
  compression?: boolean;
  /** Clock in ms since epoch (tests). */
  now?: () => number;
}

const fail = (reason: OpenFailureReason): OpenResult<never> => Object.freeze({ ok: false, reason });
const MALFORMED = fail('malformed');
const TOO_LARGE = fail('too_large');
const UNKNOWN_KEY = fail('unknown_key');
const AUTH_FAILED = fail('auth_failed');
const EXPIRED = fail('expired');
const NOT_YET_VALID = fail('not_yet_valid');
const WRONG_AUDIENCE = fail('wrong_audience');
const WRONG_PRINCIPAL = fail('wrong_principal');
const WRONG_REQUEST = fail('wrong_request');
const UNSUPPORTED_VERSION = fail('unsupported_version');

// Nonces and flow ids come from a pooled CSPRNG buffer: one RAND_bytes call per ~200 seals instead of two per seal.
const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let poolOffset = POOL_BYTES;
function takeRandom(target: Buffer, offset: number, n: number): void {
  if (poolOffset + n > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  pool.copy(target, offset, poolOffset, poolOffset + n);
  poolOffset += n;
}

/**
 * A new flow id, in the 22-character base64url form the codec stores in 16 bytes: the time in milliseconds (48 bits,
 * the first 8 characters) then 80 random bits from the pool. Time-ordered like a UUIDv7 so that the records a store
 * or an audit index keeps per flow are written next to each other: with fully random ids every insert dirtied its
 * own B-tree page, and SQLite's commits cost three times as much. The id is no secret (the seal protects the state);
 * the 80 random bits keep two flows started in the same millisecond apart.
 */
export function newFlowId(now: number = Date.now()): string {
  const id = Buffer.allocUnsafe(16);
  writeFlowId(id, 0, now);
  return id.toString('base64url');
}

function writeFlowId(target: Buffer, offset: number, now: number): void {
  target.writeUIntBE(Math.max(0, Math.floor(now)) % 2 ** 48, offset, 6);
  takeRandom(target, offset + 6, 10);
}

function sessionKey(key: DerivedKey, session: Buffer): KeyObject {
  return deriveSubkey(key.enc, session);
}

interface SealingSession {
  id: Buffer;
  key: KeyObject;
  seals: number;
}

function tag(key: KeyObject, domain: string, text: string, bytes: number): Buffer {
  return hmacSha256(key, domain, text).subarray(0, bytes);
}

/**
 * The request tag. It travels only inside the AES-GCM ciphertext, so the client can neither read nor alter it and a
 * plain SHA-256 binds as well as an HMAC would — at a fraction of the cost on the hot path.
 */
function requestDigest(text: string): Buffer {
  const input = DOMAIN_REQUEST + text;
  const digest = oneShotHash
    ? oneShotHash('sha256', input, 'buffer')
    : createHash('sha256').update(input).digest();
  return digest.subarray(0, REQ_TAG);
}

// crypto.hash (Node >= 20.12) hashes without a Hash object: no native handle for the collector to track per request.
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'buffer') => Buffer })
  .hash;

function principalKeyText(p: StateBinding['principal']): string {
  if (p === undefined || p === null) return '-';
  // Each form is self-delimiting ('-', a JSON string, a JSON array): the request tag appends to it.
  if (typeof p === 'string') return 's' + JSON.stringify(p);
  return 'o' + principalText(p);
}

function requestText(b: StateBinding, principal: string): string {
  if (typeof b.method !== 'string' || typeof b.target !== 'string') {
    throw new StateUsageError('binding.method and binding.target must be strings');
  }
  // JSON strings are self-delimiting, so the concatenation is unambiguous.
  return (
    principal +
    JSON.stringify(b.method) +
    JSON.stringify(b.target) +
    (b.arguments === undefined ? '' : canonicalJson(b.arguments))
  );
}

function writeVarint(buf: Buffer, offset: number, value: number): number {
  let v = value;
  let o = offset;
  while (v >= 0x80) {
    buf[o++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  buf[o++] = v;
  return o;
}

// Set by readVarint; the codec is synchronous, so a module-level cursor is safe and saves an allocation.
let varintEnd = 0;
function readVarint(buf: Buffer, offset: number, end: number): number {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 5 && offset + i < end; i++) {
    const b = buf[offset + i]!;
    value += (b & 0x7f) * scale;
    if (b < 0x80) {
      varintEnd = offset + i + 1;
      return value;
    }
    scale *= 0x80;
  }
  return -1;
}

function isRawFlowId(flowId: string): boolean {
  return flowId.length === 22 && isCanonicalBase64url(flowId);
}

function positiveInt(name: string, value: number, max: number): number {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new StateRangeError(`${name} must be an integer from 1 to ${max}`);
  }
  return value;
}

/**
 * Seals and opens requestState: AES-256-GCM under the keyring's current key, bound to an audience, a principal,
 * a request (method, target, arguments), a flow id, a round and an expiry. Synchronous; `open` never throws.
 */
export class StateCodec {
  readonly audience: string;
  readonly maxTokenBytes: number;
  readonly maxPayloadBytes: number;
  readonly defaultTtlMs: number;
  readonly maxClockSkewMs: number;
  readonly compression: boolean;
  readonly #now: () => number;
  readonly #current: DerivedKey;
  readonly #byKid: ReadonlyMap<string, DerivedKey>;
  readonly #audienceTags: Map<DerivedKey, Buffer>;
  // Principals recur across rounds and requests; caching their tags saves an HMAC per seal.
  readonly #principalTags = new Map<DerivedKey, Map<string, Buffer>>();
  #sealing: SealingSession | undefined;
  // kid + session id → session key, filled only after a token under it authenticated (forgeries cannot fill it).
  readonly #openingKeys = new Map<string, KeyObject>();

  constructor(options: StateCodecOptions) {
    const { current, byKid } = keyringInternals(options.keyring);
    if (typeof options.audience !== 'string' || options.audience === '') {
      throw new StateUsageError('StateCodec: audience must be a non-empty string (the server id)');
    }
    this.audience = options.audience;
    this.maxTokenBytes = positiveInt(
      'maxTokenBytes',
      options.maxTokenBytes ?? STATE_CODEC_DEFAULTS.maxTokenBytes,
      2 ** 30,
    );
    this.maxPayloadBytes = positiveInt(
      'maxPayloadBytes',
      options.maxPayloadBytes ?? STATE_CODEC_DEFAULTS.maxPayloadBytes,
      2 ** 30,
    );
    this.defaultTtlMs = positiveInt(
      'defaultTtlMs',
      options.defaultTtlMs ?? STATE_CODEC_DEFAULTS.defaultTtlMs,
      MAX_TTL_MS,
    );
    this.maxClockSkewMs = positiveInt(
      'maxClockSkewMs',
      options.maxClockSkewMs ?? STATE_CODEC_DEFAULTS.maxClockSkewMs,
      MAX_TTL_MS,
    );
    this.compression = options.compression ?? STATE_CODEC_DEFAULTS.compression;
    this.#now = options.now ?? Date.now;
    this.#current = current;
    this.#byKid = byKid;
    this.#audienceTags = new Map();
    for (const k of byKid.values())
      this.#audienceTags.set(k, tag(k.bind, DOMAIN_AUDIENCE, this.audience, AUD_TAG));
  }

  #principalTag(key: DerivedKey, principal: string): Buffer {
    let cache = this.#principalTags.get(key);
    if (cache === undefined) {
      cache = new Map();
      this.#principalTags.set(key, cache);
    }
    let t = cache.get(principal);
    if (t === undefined) {
      t = tag(key.bind, DOMAIN_PRINCIPAL, principal, PRN_TAG);
      if (cache.size >= PRINCIPAL_CACHE_SIZE) cache.clear();
      cache.set(principal, t);
    }
    return t;
  }

  /**
   * Seals a JSON-serializable payload bound to `binding`.
   * @throws StateUsageError/StateRangeError for a bad payload, binding or option; StateTooLargeError over a cap.
   */
  seal(payload: unknown, binding: StateBinding, options: SealOptions = {}): string {
    const key = this.#current;
    const issuedAt = Math.floor(this.#now());
    if (!(issuedAt >= 0 && issuedAt <= MAX_UINT48))
      throw new StateRangeError('clock returned an invalid time');
    const ttl = positiveInt('ttlMs', options.ttlMs ?? this.defaultTtlMs, MAX_TTL_MS);
    const round = options.round ?? 1;
    if (!Number.isInteger(round) || round < 0 || round > MAX_ROUND) {
      throw new StateRangeError(`round must be an integer from 0 to ${MAX_ROUND}`);
    }

    let json: string | undefined;
    try {
      json = JSON.stringify(payload);
    } catch (error) {
      // A bigint or a cycle: JSON.stringify's own TypeError, told in the codec's terms.
      throw new StateUsageError(
        `requestState payload must be JSON-serializable: ${(error as Error).message}`,
      );
    }
    if (typeof json !== 'string') throw new StateUsageError('requestState payload must be JSON-serializable');
    let body = Buffer.from(json, 'utf8');
    if (body.length > this.maxPayloadBytes) {
      throw new StateTooLargeError(
        `requestState payload is ${body.length} bytes, over maxPayloadBytes ${this.maxPayloadBytes}`,
      );
    }
    let flags = 0;
    if (this.compression && body.length >= DEFLATE_MIN_BYTES) {
      const z = deflateRawSync(body, ZLIB_OPTIONS);
      if (z.length < body.length) {
        body = z;
        flags |= FLAG_DEFLATE;
      }
    }

    // Fixed part of the body: issuedAt(6) ttl(<=5) round(<=5) flowId(<=1+128) tags.
    const head = Buffer.allocUnsafe(6 + 5 + 5 + 1 + MAX_FLOW_ID_BYTES + BIND_TAGS);
    head.writeUIntBE(issuedAt, 0, 6);
    let o = writeVarint(head, 6, ttl);
    o = writeVarint(head, o, round);
    const flowId = options.flowId;
    if (flowId === undefined) {
      flags |= FLAG_RAW_FLOW;
      writeFlowId(head, o, issuedAt);
      o += 16;
    } else if (typeof flowId === 'string' && isRawFlowId(flowId)) {
      flags |= FLAG_RAW_FLOW;
      o += head.write(flowId, o, 16, 'base64url');
    } else {
      if (typeof flowId !== 'string' || flowId === '')
        throw new StateUsageError('flowId must be a non-empty string');
      const n = Buffer.byteLength(flowId, 'utf8');
      if (n > MAX_FLOW_ID_BYTES)
        throw new StateRangeError(`flowId must be at most ${MAX_FLOW_ID_BYTES} bytes`);
      head[o++] = n;
      o += head.write(flowId, o, n, 'utf8');
    }
    this.#audienceTags.get(key)!.copy(head, o);
    o += AUD_TAG;
    const principal = principalKeyText(binding.principal);
    this.#principalTag(key, principal).copy(head, o);
    o += PRN_TAG;
    requestDigest(requestText(binding, principal)).copy(head, o);
    o += REQ_TAG;

    const headerLen = 2 + key.kidBytes.length;
    const total = headerLen + SESSION_BYTES + NONCE_BYTES + o + body.length + GCM_TAG_BYTES;
    const chars = Math.ceil((total * 4) / 3);
    if (chars > this.maxTokenBytes) {
      throw new StateTooLargeError(
        `requestState would be ${chars} bytes, over maxTokenBytes ${this.maxTokenBytes}`,
      );
    }
    const out = Buffer.allocUnsafe(total);
    out[0] = STATE_FORMAT_VERSION;
    out[1] = flags | (key.kidBytes.length - 1);
    key.kidBytes.copy(out, 2);
    const session = this.#sealingSession(key);
    session.id.copy(out, headerLen);
    const nonceAt = headerLen + SESSION_BYTES;
    takeRandom(out, nonceAt, NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', session.key, out.subarray(nonceAt, nonceAt + NONCE_BYTES), {
      authTagLength: GCM_TAG_BYTES,
    });
    // The session id is authenticated too: a token moved to another session cannot verify.
    cipher.setAAD(out.subarray(0, nonceAt));
    let w = nonceAt + NONCE_BYTES;
    w += cipher.update(head.subarray(0, o)).copy(out, w);
    w += cipher.update(body).copy(out, w);
    w += cipher.final().copy(out, w);
    cipher.getAuthTag().copy(out, w);
    return out.toString('base64url');
  }

  #sealingSession(key: DerivedKey): SealingSession {
    let session = this.#sealing;
    if (session === undefined || session.seals >= SESSION_SEALS) {
      const id = Buffer.allocUnsafe(SESSION_BYTES);
      takeRandom(id, 0, SESSION_BYTES);
      session = { id, key: sessionKey(key, id), seals: 0 };
      this.#sealing = session;
    }
    session.seals++;
    return session;
  }

  /** Opens a token presented with `binding`. Never throws; a failure carries the precise reason for logs. */
  open<T = unknown>(token: unknown, binding: StateBinding): OpenResult<T> {
    try {
      return this.#open<T>(token, binding);
    } catch {
      return MALFORMED;
    }
  }

  #open<T>(token: unknown, binding: StateBinding): OpenResult<T> {
    if (typeof token !== 'string' || token.length === 0) return MALFORMED;
    if (token.length > this.maxTokenBytes) return TOO_LARGE;
    const buf = decodeBase64urlStrict(token);
    if (buf === undefined || buf.length < 2) return MALFORMED;
    if (buf[0] !== STATE_FORMAT_VERSION) return UNSUPPORTED_VERSION;
    const b1 = buf[1]!;
    const flags = b1 & 0xf0;
    if ((flags & ~KNOWN_FLAGS) !== 0) return MALFORMED;
    const headerLen = 2 + (b1 & 0x0f) + 1;
    const nonceAt = headerLen + SESSION_BYTES;
    const bodyAt = nonceAt + NONCE_BYTES;
    if (buf.length < bodyAt + MIN_BODY_BYTES + GCM_TAG_BYTES) return MALFORMED;
    const key = this.#byKid.get(buf.toString('latin1', 2, headerLen));
    if (key === undefined) return UNKNOWN_KEY;

    const tagStart = buf.length - GCM_TAG_BYTES;
    const sessionName = buf.toString('latin1', 2, nonceAt);
    const cached = this.#openingKeys.get(sessionName);
    const sessionKeyObject = cached ?? sessionKey(key, buf.subarray(headerLen, nonceAt));
    const decipher = createDecipheriv('aes-256-gcm', sessionKeyObject, buf.subarray(nonceAt, bodyAt), {
      authTagLength: GCM_TAG_BYTES,
    });
    decipher.setAAD(buf.subarray(0, nonceAt));
    decipher.setAuthTag(buf.subarray(tagStart));
    const body = decipher.update(buf.subarray(bodyAt, tagStart));
    try {
      decipher.final();
    } catch {
      return AUTH_FAILED;
    }
    if (cached === undefined) {
      if (this.#openingKeys.size >= SESSION_CACHE_SIZE) this.#openingKeys.clear();
      this.#openingKeys.set(sessionName, sessionKeyObject);
    }

    // Authenticated from here on: the layout was written by one of our keys.
    const end = body.length;
    const issuedAt = body.readUIntBE(0, 6);
    const ttl = readVarint(body, 6, end);
    if (ttl < 0) return MALFORMED;
    const round = readVarint(body, varintEnd, end);
    if (round < 0) return MALFORMED;
    let o = varintEnd;
    let flowId: string;
    if ((flags & FLAG_RAW_FLOW) !== 0) {
      flowId = body.toString('base64url', o, o + 16);
      o += 16;
    } else {
      const n = body[o++]!;
      flowId = body.toString('utf8', o, o + n);
      o += n;
    }
    if (o + BIND_TAGS > end) return MALFORMED;

    if (!macMatches(body.subarray(o, o + AUD_TAG), this.#audienceTags.get(key)!)) return WRONG_AUDIENCE;
    o += AUD_TAG;
    let principal: string;
    try {
      principal = principalKeyText(binding.principal);
    } catch {
      return WRONG_PRINCIPAL;
    }
    let request: Buffer | undefined;
    try {
      request = requestDigest(requestText(binding, principal));
    } catch {
      // unusable method, target or arguments: decided below, after the principal
    }
    // The request tag covers principal and request; only on a mismatch do we look at which one differs.
    if (request === undefined || !macMatches(body.subarray(o + PRN_TAG, o + PRN_TAG + REQ_TAG), request)) {
      if (!macMatches(body.subarray(o, o + PRN_TAG), this.#principalTag(key, principal)))
        return WRONG_PRINCIPAL;
      return WRONG_REQUEST;
    }
    o += PRN_TAG + REQ_TAG;

    const expiresAt = issuedAt + ttl;
    const now = this.#now();
    // Written so that a NaN clock fails closed.
    if (!(now < expiresAt)) return EXPIRED;
    if (issuedAt > now + this.maxClockSkewMs) return NOT_YET_VALID;

    let json = body.subarray(o);
    if ((flags & FLAG_DEFLATE) !== 0)
      json = inflateRawSync(json, { ...ZLIB_OPTIONS, maxOutputLength: this.maxPayloadBytes });
    const payload = JSON.parse(json.toString('utf8')) as T;
    return {
      ok: true,
      state: { payload, flowId, round, issuedAt, expiresAt, kid: key.kid, currentKey: key === this.#current },
    };
  }
}
