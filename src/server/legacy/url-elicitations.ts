// URL-mode questions over the bridge. 2025-11-25 requires an `elicitationId` on them, and lets the server say when
// the out-of-band interaction is over (notifications/elicitation/complete). A handler asks a URL question again on
// every round until the person has acted on the page; a 2025 client that already accepted the link is not asked
// again (that would prompt the person anew on every check): the bridge answers for it and waits before the next
// round, woken early when the server's own page reports the URL done. Once a round no longer asks that URL, the
// client is told it is complete.
import {
  isJsonObject,
  type JsonObject,
  type JsonRpcNotification,
  knowsElicitationModes,
} from '../../protocol/index.js';
import { hmacSha256 } from '../../state/internal.js';
import type { LegacySession } from './session.js';

/** Waits between checks of a URL the client accepted: short first (the person may be quick), then backing off. */
const FIRST_WAIT_MS = 1000;
const MAX_WAIT_MS = 15_000;

export class UrlElicitations {
  private readonly idKey: Buffer;
  private readonly waiting = new Map<string, Set<() => void>>();

  constructor(key: Uint8Array) {
    this.idKey = hmacSha256(key, 'mrtr/elicitation-id');
  }

  /**
   * The question's elicitationId: the same for the same URL in the same session (so a client can match the
   * completion to the question), keyed so that it tells nothing of the session, the URL or the flow.
   */
  idOf(session: LegacySession, url: string): string {
    return hmacSha256(this.idKey, `${session.key}\n${url}`).toString('base64url').slice(0, 22);
  }

  /** The server's page reports `url` done: wake the requests waiting to check it again. */
  done(url: string): void {
    for (const wake of [...(this.waiting.get(url) ?? [])]) wake();
  }

  /** Resolves after `ms`, on `done` of one of `urls`, or when `signal` aborts (the caller then sees the abort). */
  wait(urls: readonly string[], ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', wake);
        for (const url of urls) {
          const set = this.waiting.get(url);
          set?.delete(wake);
          if (set?.size === 0) this.waiting.delete(url);
        }
        resolve();
      };
      const timer = setTimeout(wake, ms);
      signal.addEventListener('abort', wake, { once: true });
      for (const url of urls) {
        let set = this.waiting.get(url);
        if (!set) {
          set = new Set();
          this.waiting.set(url, set);
        }
        set.add(wake);
      }
    });
  }
}

const urlOf = (question: unknown): string | undefined => {
  if (!isJsonObject(question) || question.method !== 'elicitation/create') return undefined;
  const params = question.params;
  return isJsonObject(params) && params.mode === 'url' && typeof params.url === 'string'
    ? params.url
    : undefined;
};

/** One bridged request's URL questions: their ids, which the client accepted, and their completion notices. */
export class RequestUrlQuestions {
  /** elicitationId → URL, for the links the client accepted and whose completion it was not told yet. */
  private readonly accepted = new Map<string, string>();
  private checks = 0;
  private readonly modes: boolean;
  private readonly notifies: boolean;

  constructor(
    private readonly all: UrlElicitations,
    private readonly session: LegacySession,
    private readonly send: (n: JsonRpcNotification) => void,
  ) {
    this.modes = knowsElicitationModes(session.protocolVersion);
    const elicitation = session.clientCapabilities.elicitation;
    // Only a client that declared URL elicitation knows what the notice is about.
    this.notifies = this.modes && isJsonObject(elicitation) && isJsonObject(elicitation.url);
  }

  /** The question as sent to this client: a URL question carries its elicitationId from 2025-11-25 on. */
  outgoing(question: JsonObject): JsonObject {
    const url = urlOf(question);
    if (url === undefined || !this.modes) return question;
    const params = { ...(question.params as JsonObject), elicitationId: this.all.idOf(this.session, url) };
    return { ...question, params };
  }

  /** The client answered `question`: remember an accepted link. */
  answered(question: JsonObject, result: JsonObject): void {
    const url = urlOf(question);
    if (url !== undefined && result.action === 'accept')
      this.accepted.set(this.all.idOf(this.session, url), url);
  }

  /** The keys of `asked` whose link the client already accepted in this request: answered for it, not re-asked. */
  repeated(asked: JsonObject): Set<string> {
    const keys = new Set<string>();
    for (const [key, question] of Object.entries(asked)) {
      const url = urlOf(question);
      if (url !== undefined && this.accepted.has(this.all.idOf(this.session, url))) keys.add(key);
    }
    return keys;
  }

  /** Wait before checking again on links the person is still busy with; the page being done cuts it short. */
  async waitForPerson(asked: JsonObject, keys: ReadonlySet<string>, signal: AbortSignal): Promise<void> {
    const urls = [...keys].map((k) => urlOf(asked[k])).filter((u): u is string => u !== undefined);
    const ms = Math.min(FIRST_WAIT_MS * 2 ** this.checks, MAX_WAIT_MS);
    this.checks++;
    await this.all.wait(urls, ms, signal);
  }

  /** A round was answered: tell the client which accepted links it no longer asks (the person is done there). */
  settle(asked: JsonObject): void {
    const still = new Set(Object.values(asked).map(urlOf));
    for (const [id, url] of this.accepted) {
      if (still.has(url)) continue;
      this.accepted.delete(id);
      if (this.notifies)
        this.send({
          jsonrpc: '2.0',
          method: 'notifications/elicitation/complete',
          params: { elicitationId: id },
        });
    }
  }
}
