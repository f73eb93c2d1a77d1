// How a 2025 client's answer finds the instance whose request waits for it. The answer to a server-to-client
// request is a separate POST that a load balancer may send anywhere; the request id names the waiting instance, and
// the relay carries the answer there (Redis pub/sub in a fleet: mrtr/stores RedisAnswerRelay).
import type { Principal } from '../context.js';

export interface RelayedAnswer {
  /** The server-to-client request's id. */
  id: string;
  /** The session's key (the hash of its id): an answer only counts within the session that was asked. */
  session: string;
  /** The JSON-RPC response as the client sent it. */
  message: Record<string, unknown>;
  /** Who sent it (the principal of its POST): the waiting flow's next round runs as them. */
  principal?: Principal;
}

export interface AnswerRelay {
  /** Hand the answer to `instance`; resolves to whether some instance listens there. */
  publish(instance: string, answer: RelayedAnswer): Promise<boolean>;
  /** Receive the answers addressed to `instance`, until the returned function is called. */
  subscribe(instance: string, onAnswer: (answer: RelayedAnswer) => void): Promise<() => Promise<void>>;
}
