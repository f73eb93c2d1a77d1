// How an answer finds the instance whose wait it settles. The answer to a 2025 server-to-client request is a separate
// POST that a load balancer may send anywhere; the request id names the waiting instance, and the relay carries the
// answer there (Redis pub/sub in a fleet: mrtr/stores RedisAnswerRelay). `P` is who sent it, in the holder's terms.

export interface RelayedAnswer<P = unknown> {
  /** The id the waiting instance gave (a server-to-client request's id). */
  id: string;
  /** The group whose wait it is (the session's key): an answer only counts within the group that was asked. */
  session: string;
  /** The answer as the other side sent it (a JSON-RPC response). */
  message: Record<string, unknown>;
  /** Who sent it: the waiting side acts as them from here. */
  principal?: P;
}

export interface AnswerRelay<P = unknown> {
  /** Hand the answer to `instance`; resolves to whether some instance listens there. */
  publish(instance: string, answer: RelayedAnswer<P>): Promise<boolean>;
  /** Receive the answers addressed to `instance`, until the returned function is called. */
  subscribe(instance: string, onAnswer: (answer: RelayedAnswer<P>) => void): Promise<() => Promise<void>>;
}
