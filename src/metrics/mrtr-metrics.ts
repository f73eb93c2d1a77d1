// mrtr's Prometheus metrics, on a registry of their own (never prom-client's global one, which an application may
// fill with its own). Made only when metrics are asked for: a server without them pays nothing.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { decisionsOf } from './decisions.js';
import { BoundedLabel, MAX_TOOL_LABELS, questionKind } from './labels.js';
import type { MeasuredRound, MeasuredUpstreamRound } from './measured.js';

/** Round latency buckets (seconds): a round answered from memory takes a millisecond, one upstream many seconds. */
const ROUND_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Audit write buckets (seconds): a group commit on a local disk is a few milliseconds. */
const AUDIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];

/** What a round observer is, structurally (the server's RoundObserver). */
export interface ObserverLike<E, I> {
  observe(event: E): void | Promise<void>;
  admit?(): void | Promise<void>;
  intend?(intent: I): void | Promise<void>;
}

/** One upstream's state at a scrape. */
export interface UpstreamState {
  readonly upstream: string;
  /** Connections open to it: clients, sessions, stdio processes. */
  readonly open: number;
  /** Its tools withheld from callers at its last listing. */
  readonly withheld: number;
}

export interface MrtrMetricsOptions {
  /** Tool label values kept before the rest are counted as `other` (default 100). */
  maxToolLabels?: number;
}

export class MrtrMetrics {
  readonly registry = new Registry();
  readonly #tools: BoundedLabel;
  readonly #rounds: Counter<'method' | 'outcome' | 'tool'>;
  readonly #flows: Counter<'method' | 'outcome' | 'tool'>;
  readonly #roundSeconds: Histogram<'method' | 'outcome'>;
  readonly #questions: Counter<'kind'>;
  readonly #decisions: Counter<'control' | 'decision'>;
  readonly #replay: Counter<'reason'>;
  readonly #slowed: Counter<'reason'>;
  readonly #auditSeconds: Histogram<'event'>;
  readonly #auditFailures: Counter<'event'>;
  readonly #upstreamCalls: Counter<'upstream'>;
  readonly #upstreamErrors: Counter<'upstream'>;
  readonly #upstreamSeconds: Histogram<'upstream'>;
  readonly #backlogs: Array<() => number> = [];
  readonly #pending: Array<() => Promise<number>> = [];
  readonly #upstreamStates: Array<() => readonly UpstreamState[]> = [];

  constructor(options: MrtrMetricsOptions = {}) {
    this.#tools = new BoundedLabel(options.maxToolLabels ?? MAX_TOOL_LABELS);
    const registers = [this.registry];
    this.#rounds = new Counter({
      name: 'mrtr_rounds_total',
      help: 'MRTR rounds answered, by method, outcome and tool (tools past the label limit are "other")',
      labelNames: ['method', 'outcome', 'tool'],
      registers,
    });
    this.#flows = new Counter({
      name: 'mrtr_flows_total',
      help: 'Flows ended (a round that is not input_required), by method, final outcome and tool',
      labelNames: ['method', 'outcome', 'tool'],
      registers,
    });
    this.#roundSeconds = new Histogram({
      name: 'mrtr_round_duration_seconds',
      help: 'How long each round took, from its request read to its answer',
      labelNames: ['method', 'outcome'],
      buckets: ROUND_BUCKETS,
      registers,
    });
    this.#questions = new Counter({
      name: 'mrtr_questions_total',
      help: 'Questions rounds asked (inputRequests), by kind: form, url, sampling, roots',
      labelNames: ['kind'],
      registers,
    });
    this.#decisions = new Counter({
      name: 'mrtr_control_decisions_total',
      help: 'Decisions of the controls (guards, policy, consent, step-up, approval), by control and decision',
      labelNames: ['control', 'decision'],
      registers,
    });
    this.#replay = new Counter({
      name: 'mrtr_replay_refusals_total',
      help: 'Rounds the replay guard refused (a state presented again, a stale round), by reason',
      labelNames: ['reason'],
      registers,
    });
    this.#slowed = new Counter({
      name: 'mrtr_rate_limited_total',
      help: 'Rounds answered HTTP 429 (a rate limit, a refusal limit, a full share), by reason',
      labelNames: ['reason'],
      registers,
    });
    this.#auditSeconds = new Histogram({
      name: 'mrtr_audit_write_seconds',
      help: 'Time from a round handing its audit event to the trail until the event is durable, by event (intent, outcome)',
      labelNames: ['event'],
      buckets: AUDIT_BUCKETS,
      registers,
    });
    this.#auditFailures = new Counter({
      name: 'mrtr_audit_write_failures_total',
      help: 'Audit events the trail could not record (each such round failed), by event',
      labelNames: ['event'],
      registers,
    });
    this.#upstreamCalls = new Counter({
      name: 'mrtr_upstream_calls_total',
      help: 'Rounds the gateway sent to each upstream',
      labelNames: ['upstream'],
      registers,
    });
    this.#upstreamErrors = new Counter({
      name: 'mrtr_upstream_errors_total',
      help: 'Upstream rounds that failed (unreachable, an error answer, a time-out)',
      labelNames: ['upstream'],
      registers,
    });
    this.#upstreamSeconds = new Histogram({
      name: 'mrtr_upstream_call_duration_seconds',
      help: 'How long each upstream round took',
      labelNames: ['upstream'],
      buckets: ROUND_BUCKETS,
      registers,
    });
    const backlogs = this.#backlogs;
    new Gauge({
      name: 'mrtr_audit_backlog_events',
      help: 'Audit events waiting for the sink (queued or being written)',
      registers,
      collect() {
        this.set(backlogs.reduce((n, read) => n + read(), 0));
      },
    });
    const pending = this.#pending;
    new Gauge({
      name: 'mrtr_approvals_pending',
      help: "Approval requests waiting for a decision, in the shared store (every instance's)",
      registers,
      async collect() {
        const counts = await Promise.all(pending.map((read) => read()));
        this.set(counts.reduce((n, c) => n + c, 0));
      },
    });
    const states = () => this.#upstreamStates.flatMap((read) => read());
    new Gauge({
      name: 'mrtr_upstream_clients_open',
      help: 'Connections (clients, sessions, stdio processes) the gateway holds open to each upstream',
      labelNames: ['upstream'],
      registers,
      collect() {
        this.reset();
        for (const u of states()) this.set({ upstream: u.upstream }, u.open);
      },
    });
    new Gauge({
      name: 'mrtr_upstream_definitions_withheld',
      help: 'Tools of each upstream withheld from callers at its last listing (a changed definition, not pinned)',
      labelNames: ['upstream'],
      registers,
      collect() {
        this.reset();
        for (const u of states()) this.set({ upstream: u.upstream }, u.withheld);
      },
    });
  }

  /** A round observer that records every round (`rounds.observers`). Never holds a round: it returns nothing. */
  readonly observer = {
    observe: (round: MeasuredRound): void => this.#record(round),
  };

  #record(round: MeasuredRound): void {
    const { method, outcome } = round;
    // A refused or failed round's target is whatever the caller sent (a replay, a made-up name): it takes no label
    // of its own, or a caller could fill the 100 and push every real tool into `other`.
    const checked = outcome !== 'refused' && outcome !== 'error';
    const tool = method !== 'tools/call' ? 'none' : checked ? this.#tools.of(round.target) : 'unchecked';
    this.#rounds.inc({ method, outcome, tool });
    this.#roundSeconds.observe({ method, outcome }, round.durationMs / 1000);
    // A refused later round (a replay, an expired state) does not end the flow its state came from.
    if (outcome !== 'input_required' && !(outcome === 'refused' && round.round > 0))
      this.#flows.inc({ method, outcome, tool });
    for (const request of Object.values(round.inputRequests ?? {}))
      this.#questions.inc({ kind: questionKind(request) });
    for (const [control, decision] of decisionsOf(round)) this.#decisions.inc({ control, decision });
    if (outcome === 'refused' && round.decidedBy === 'replay')
      this.#replay.inc({ reason: round.reason ?? 'unknown' });
    if (round.httpStatus === 429) this.#slowed.inc({ reason: round.reason ?? 'unknown' });
  }

  /**
   * The audit trail as a round observer whose writes are timed: each event's time until durable, and each failure.
   * Its answers are the trail's own (the round still waits for the disk).
   */
  timedAudit<E, I>(trail: ObserverLike<E, I>): ObserverLike<E, I> {
    const time = (event: 'intent' | 'outcome', write: () => void | Promise<void>): void | Promise<void> => {
      const end = this.#auditSeconds.startTimer({ event });
      const failed = (error: unknown) => {
        this.#auditFailures.inc({ event });
        throw error;
      };
      let done: void | Promise<void>;
      try {
        done = write();
      } catch (error) {
        return failed(error);
      }
      if (!done) {
        end();
        return;
      }
      return done.then(() => {
        end();
      }, failed);
    };
    const observer: ObserverLike<E, I> = { observe: (e) => time('outcome', () => trail.observe(e)) };
    const { admit, intend } = trail;
    if (admit) observer.admit = () => admit.call(trail);
    if (intend) observer.intend = (i) => time('intent', () => intend.call(trail, i));
    return observer;
  }

  /** Events waiting for an audit sink, read at each scrape (summed over every trail given). */
  auditBacklog(read: () => number): void {
    this.#backlogs.push(read);
  }

  /** Approval requests waiting for a decision, read from the shared store at each scrape (summed). */
  approvalsPending(read: () => Promise<number>): void {
    this.#pending.push(read);
  }

  /** One upstream round of a gateway call (the gateway's observer). */
  upstreamRound(call: MeasuredUpstreamRound): void {
    const labels = { upstream: call.upstream };
    this.#upstreamCalls.inc(labels);
    if (call.failed) this.#upstreamErrors.inc(labels);
    this.#upstreamSeconds.observe(labels, call.durationMs / 1000);
  }

  /** Per upstream, read at each scrape: connections open (its pool) and tools withheld from callers. */
  upstreams(read: () => readonly UpstreamState[]): void {
    this.#upstreamStates.push(read);
  }

  /** The Prometheus text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
