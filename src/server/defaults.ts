// Every default of the server room in one frozen object, each with why it is what it is. Safety-relevant defaults
// (state compression, key handling) live with the state codec, the lowest layer, so no caller can miss them.

export const SERVER_DEFAULTS = Object.freeze({
  /** Above common client timeouts (60–120 s), so a slow tool is cut by us with a readable answer, not by a proxy. */
  handlerTimeoutMs: 120_000,
  /** Enough for real clarification flows (2–4 rounds), low enough that a looping client is stopped early. */
  maxRounds: 10,
  /** Items per page of a list method: large catalogues page, small ones never do. */
  pageSize: 100,
  /** ttlMs on lists, discovery and resources/read: a catalogue changes on deploys, not per request. */
  cacheTtlMs: 60_000,
  /** Requests are JSON-RPC messages of a few KiB; 1 MiB bounds what a client can make us buffer. */
  maxBodyBytes: 1024 * 1024,
  /** A request's head must arrive within 10 s (slowloris); MRTR requests are small. */
  headersTimeoutMs: 10_000,
  /** The whole request within 30 s; responses (SSE included) are not limited. */
  requestTimeoutMs: 30_000,
  /** Longer than common load balancers' idle timeouts (60 s), so they close idle connections first, never us. */
  keepAliveTimeoutMs: 65_000,
  /**
   * How long the server waits for a guard's store or an observer's sink (a replay store, an audit sink) before it
   * gives up and fails the round closed: long enough for a busy disk's fsync, short enough that a store that hangs
   * does not hold requests open.
   */
  hookTimeoutMs: 10_000,
  /**
   * How deep arguments, answers and `_meta` may nest: forms, messages and tool arguments are a few levels deep, and
   * every later step (canonical JSON, the audit record, the sealed state) then has a known bound.
   */
  maxInputDepth: 64,
  /** One stdio message, as on HTTP. */
  maxLineBytes: 1024 * 1024,
  /** Loopback: a server is exposed to the network only when its author says so. */
  host: '127.0.0.1',
  path: '/mcp',
  /** A task is kept a day from its creation: an approval it waits for may take that long. */
  taskTtlMs: 24 * 60 * 60 * 1000,
  /** Clients poll a task once a second: a person's answer shows at once, the server is not flooded. */
  taskPollIntervalMs: 1000,
  /**
   * A task round's claim lasts 30 s and is renewed every 10 s while the round runs: an instance that dies holds its
   * tasks for at most 30 s before another instance runs their rounds again.
   */
  taskLeaseMs: 30_000,
  /**
   * Unfinished tasks one principal may have: more than any person follows, few enough that one caller starting tasks
   * in a loop cannot fill the store for everyone (each lives a day).
   */
  taskMaxPerPrincipal: 100,
});
