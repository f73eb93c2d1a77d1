// The seam where the MRTR pipeline opens requestState before a handler runs and seals it after, and the default
// implementation on the sealed codec of `src/state/` (AES-256-GCM, key rotation, bindings, size cap).
import type { FlowJournal } from '../flow/internal.js';
import {
  type OpenFailureReason,
  type StateBinding,
  StateCodec,
  type StateCodecOptions,
} from '../state/index.js';

export type { StateBinding };

/** What the server keeps inside the sealed state between rounds. */
export interface StateEnvelope {
  /** Keys of the inputRequests sent in the round that minted this state: only these answers are accepted. */
  asked: string[];
  /** One code per asked key ('f' form, 'u' url, 's' sampling, 'r' roots), so each answer is checked by kind. */
  kinds: string[];
  /** The handler author's own state, if any. */
  data?: unknown;
  /** The sequential-flow journal (answers and steps so far), if the handler uses `ctx.ask`. */
  journal?: FlowJournal;
  /** The flow's first round as a W3C traceparent, when tracing is on: later rounds join its trace. */
  trace?: string;
}

/** A sealed state as opened: the envelope plus what the codec authenticates around it. */
export interface OpenedRound {
  envelope: StateEnvelope;
  flowId: string;
  /** input_required rounds so far in this flow. */
  round: number;
  /** When the presented state expires (ms since the epoch). */
  expiresAt: number;
}

export type StateOpenFailure = OpenFailureReason;
export type StateOpenResult = ({ ok: true } & OpenedRound) | { ok: false; reason: StateOpenFailure };

export interface RequestStateCodec {
  seal(
    envelope: StateEnvelope,
    binding: StateBinding,
    flow: { flowId: string; round: number; ttlMs?: number },
  ): string;
  open(token: string, binding: StateBinding): StateOpenResult;
}

/** The default codec: encrypted, authenticated, bound to audience, principal, method, target and arguments. */
export class SealedStateCodec implements RequestStateCodec {
  readonly codec: StateCodec;
  constructor(options: StateCodecOptions) {
    this.codec = new StateCodec(options);
  }

  seal(
    envelope: StateEnvelope,
    binding: StateBinding,
    flow: { flowId: string; round: number; ttlMs?: number },
  ): string {
    return this.codec.seal(envelope, binding, flow);
  }

  open(token: string, binding: StateBinding): StateOpenResult {
    const opened = this.codec.open<StateEnvelope>(token, binding);
    if (!opened.ok) return opened;
    const e = opened.state.payload;
    if (typeof e !== 'object' || e === null || !Array.isArray(e.asked) || !Array.isArray(e.kinds)) {
      return { ok: false, reason: 'malformed' };
    }
    return {
      ok: true,
      envelope: e,
      flowId: opened.state.flowId,
      round: opened.state.round,
      expiresAt: opened.state.expiresAt,
    };
  }
}
