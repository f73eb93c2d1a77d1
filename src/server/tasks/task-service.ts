// The tasks extension on the server: makes tasks, runs their rounds in the background, and answers tasks/get,
// tasks/update and tasks/cancel for the principal who made them. Rounds run through the dispatcher like any client's
// (guards, sealed state, answer checks, audit); the record in the shared store carries what a client would carry.
import { randomBytes } from 'node:crypto';
import {
  type DetailedTask,
  ErrorCode,
  type InputResponse,
  type JsonObject,
  type JsonRpcRequest,
  type JsonRpcResponse,
  McpError,
  MrtrError,
  type Result,
} from '../../protocol/index.js';
import { STORE_LIMITS } from '../../stores/index.js';
import type { Principal } from '../context.js';
import type { Logger, RequestEnvironment } from '../environment.js';
import type { MaybePromise } from '../maybe-async.js';
import type { RoundEvent } from '../round/observer.js';
import { type OpenTasks, ownerOf } from './open-tasks.js';
import {
  afterRound,
  askedAgain,
  cancelled,
  detailedTask,
  isTerminal,
  nextInputResponses,
  retryLater,
  type TaskRecord,
  withAnswers,
} from './record.js';
import { looksLikeTaskId, newTaskId, type TaskBook } from './task-book.js';

export interface TaskServiceOptions {
  book: TaskBook;
  /** Each principal's unfinished tasks, bounded. */
  open: OpenTasks;
  /** Runs one request through the server as a client's would be (the dispatcher's handleRequest). */
  route: (
    request: JsonRpcRequest,
    env: RequestEnvironment & { taskId: string },
  ) => MaybePromise<JsonRpcResponse>;
  /** Told the transitions no round records (a cancel): the audit trail's observers. */
  record: (event: RoundEvent) => MaybePromise<void>;
  logger: Logger;
  /** How long a task is kept from its creation (default 24 h: an approval may take a day). */
  ttlMs: number;
  /** The polling interval suggested to clients (default 1 s). */
  pollIntervalMs: number;
  /** How long a round's claim holds before another instance may run it again (its instance died). */
  leaseMs: number;
  /** Told the flow of a task its caller cancelled: what waits for a person in it is withdrawn. */
  cancelled?: (flowId: string) => void;
  now?: () => number;
}

/** How a new task begins: a round to run (the call's state and answers), or a round that already asked. */
export type TaskOrigin =
  | { kind: 'round'; requestState?: string; inputResponses?: Readonly<Record<string, InputResponse>> }
  | { kind: 'asked'; result: JsonObject; openedUrls?: string[] };

/** A new task's record leaves a quarter of the store's value limit for the answers and results to come. */
const MAX_CREATED_BYTES = Math.floor((STORE_LIMITS.maxValueBytes * 3) / 4);

/** Not found, expired and another principal's task: one answer, byte for byte, so none tells them apart. */
const notFound = (id: unknown) =>
  new McpError(
    ErrorCode.InvalidParams,
    `Task not found: ${typeof id === 'string' ? id.slice(0, 64) : String(id)} (unknown, expired, or not yours)`,
  );

export class TaskService {
  private readonly now: () => number;
  /**
   * This instance's name in leases: another instance's claim is never mistaken for ours. Drawn on first use, not in
   * the constructor: workerd allows no random values while a module loads, which is when a worker builds its server.
   */
  #holder: string | undefined;
  private get holder(): string {
    this.#holder ??= randomBytes(8).toString('hex');
    return this.#holder;
  }
  /** Rounds this instance is running, to abort on cancel. */
  private readonly running = new Map<string, AbortController>();
  /** Checks of waiting tasks this instance has scheduled. */
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private closed = false;
  /** subscriptions/listen streams on this instance, by task id: told each change this instance makes. */
  private readonly watchers = new Map<string, Set<(task: DetailedTask) => void>>();

  constructor(private readonly o: TaskServiceOptions) {
    this.now = o.now ?? Date.now;
  }

  /** How long a task is kept unless its tool says otherwise: its rounds' sealed state lives as long. */
  get ttlMs(): number {
    return this.o.ttlMs;
  }

  /**
   * Refuses (429, `too_many_tasks`) a principal at its limit of unfinished tasks: checked before a call that may
   * become a task does any work. `create` decides for good.
   */
  admits(principal: Principal | undefined): Promise<void> {
    return this.o.open.check(ownerOf(principal));
  }

  /**
   * Make a task for a tools/call and start its first round; resolves once the task is durably stored. Refused (429,
   * `too_many_tasks`) when the principal has as many unfinished tasks as it may.
   */
  async create(
    call: { params: JsonObject; principal: Principal | undefined; id?: string; flowId?: string | undefined },
    tool: string,
    origin: TaskOrigin,
    ttlMs: number | undefined,
  ): Promise<Result> {
    const now = this.now();
    let record: TaskRecord = {
      v: 1,
      id: call.id ?? newTaskId(),
      principal: call.principal ?? null,
      tool,
      arguments: (call.params.arguments ?? {}) as JsonObject,
      meta: (call.params._meta ?? {}) as JsonObject,
      status: 'working',
      createdAt: now,
      updatedAt: now,
      ttlMs: ttlMs ?? this.o.ttlMs,
      pollIntervalMs: this.o.pollIntervalMs,
      next: { answers: Object.create(null) },
      asked: Object.create(null),
      issuedKeys: [],
      waitingKeys: [],
      openedUrls: [],
      rounds: 0,
    };
    if (call.flowId !== undefined) record.flowId = call.flowId;
    if (origin.kind === 'round') {
      if (origin.requestState !== undefined) record.next.requestState = origin.requestState;
      if (origin.inputResponses) record.next.answers = { ...origin.inputResponses };
      record.lease = { holder: this.holder, until: now + this.o.leaseMs };
    } else record = askedAgain({ ...record, openedUrls: origin.openedUrls ?? [] }, origin.result, now);
    // Room for what the task adds later (answers, a result, a failure) must remain under the store's value limit.
    const size = Buffer.byteLength(JSON.stringify(record));
    if (size > MAX_CREATED_BYTES)
      throw new McpError(
        ErrorCode.InvalidParams,
        `Invalid params: this call is too large to run as a task (${size} bytes with its arguments and _meta; a task starts with at most ${MAX_CREATED_BYTES})`,
      );
    // Stored first, counted second: a count only ever names tasks whose record is there, so a concurrent call at the
    // limit, re-checking the listed tasks, cannot mistake one still being written for one that ended and drop it.
    await this.o.book.create(record);
    try {
      await this.o.open.add(ownerOf(record.principal), record.id, record.createdAt + record.ttlMs);
    } catch (error) {
      // Refused (or the count unavailable): the record is taken back; nobody was told its id, and it never ran.
      await this.o.book
        .discard(record.id)
        .catch((cause: unknown) =>
          this.o.logger.warn({ task: record.id, err: messageOf(cause) }, 'refused task record not removed'),
        );
      throw error;
    }
    this.emit(record);
    if (record.lease) this.launch(record);
    else this.schedule(record);
    const { inputRequests: _asked, result: _result, error: _error, ...task } = detailedTask(record);
    return { ...task, resultType: 'task' } as unknown as Result;
  }

  /** tasks/get: the task as it is now. A round whose instance died, or a due check, is started here. */
  async get(id: unknown, principal: Principal | undefined): Promise<DetailedTask> {
    let record = await this.owned(id, principal);
    if (!isTerminal(record.status) && this.due(record)) {
      const claimed = await this.claim(record.id);
      if (claimed) {
        record = claimed;
        this.launch(claimed);
      }
    }
    return detailedTask(record);
  }

  /** tasks/update: take the answers to questions the task asked; once all are in, run the next round. */
  async update(id: unknown, principal: Principal | undefined, inputResponses: unknown): Promise<void> {
    if (typeof inputResponses !== 'object' || inputResponses === null || Array.isArray(inputResponses))
      throw new McpError(
        ErrorCode.InvalidParams,
        'Invalid params: inputResponses must be an object of answers',
      );
    for (const [key, answer] of Object.entries(inputResponses)) {
      if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
        throw new McpError(
          ErrorCode.InvalidParams,
          `Invalid params: inputResponses.${key} must be an object`,
        );
    }
    await this.owned(id, principal);
    const now = this.now();
    let updated: Awaited<ReturnType<TaskBook['update']>>;
    try {
      updated = await this.o.book.update(id as string, (record) => {
        const next = withAnswers(record, inputResponses as Record<string, unknown>, now);
        if (next && next.status === 'working')
          next.lease = { holder: this.holder, until: now + this.o.leaseMs };
        return next;
      });
    } catch (error) {
      // Answers the store cannot keep with the task: the client's to shorten, the task unchanged.
      if (!(error instanceof MrtrError && error.code === 'ERR_INVALID_ARGUMENT')) throw error;
      throw new McpError(
        ErrorCode.InvalidParams,
        'Invalid params: these answers are too large for the task to keep; send shorter ones',
      );
    }
    if (updated?.changed) this.emit(updated.record);
    if (updated?.changed && updated.record.lease?.holder === this.holder) this.launch(updated.record);
  }

  /** tasks/cancel: the task ends as cancelled; a round running here has its signal aborted. */
  async cancel(id: unknown, principal: Principal | undefined, requestId: string | number): Promise<void> {
    const before = await this.owned(id, principal);
    const now = this.now();
    const updated = await this.o.book.update(before.id, (record) => cancelled(record, now));
    this.running.get(before.id)?.abort(new McpError(ErrorCode.InvalidRequest, 'the task was cancelled'));
    this.unschedule(before.id);
    if (updated?.changed) {
      this.emit(updated.record);
      this.ended(updated.record);
      if (updated.record.flowId !== undefined) this.o.cancelled?.(updated.record.flowId);
      // The ended record keeps no arguments: the event records the call's, as read before the cancel.
      await this.o.record(
        this.transition({ ...updated.record, arguments: before.arguments }, requestId, 'tasks/cancel', now, {
          outcome: 'cancelled',
          reason: 'the task was cancelled by its caller',
        }),
      );
    }
  }

  /**
   * The instance stops: no more checks or lease renewals, its running rounds are aborted and their answers dropped.
   * Its tasks are not lost: once their leases lapse, any other instance runs their rounds again.
   */
  close(): void {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const controller of this.running.values()) controller.abort();
  }

  private async owned(id: unknown, principal: Principal | undefined): Promise<TaskRecord> {
    if (!looksLikeTaskId(id)) throw notFound(id);
    const record = await this.o.book.get(id);
    if (!record || !samePrincipal(record.principal, principal)) throw notFound(id);
    return record;
  }

  /**
   * A round whose claim lapsed (its instance died), or a waiting task whose check is due and unclaimed. `early`: the
   * check's own timer fired — a clock that reads a millisecond behind the timer must not drop the check.
   */
  private due(record: TaskRecord, early = false): boolean {
    const now = this.now();
    if (record.lease) return record.lease.until <= now;
    return record.status === 'working' && record.checkAt !== undefined && (early || record.checkAt <= now);
  }

  /** Claim the task's next round for this instance (compare-and-set: one instance wins). */
  private async claim(id: string, early = false): Promise<TaskRecord | undefined> {
    const now = this.now();
    const updated = await this.o.book.update(id, (record) =>
      isTerminal(record.status) || record.status === 'input_required' || !this.due(record, early)
        ? undefined
        : { ...record, lease: { holder: this.holder, until: now + this.o.leaseMs } },
    );
    return updated?.changed ? updated.record : undefined;
  }

  /** Run the task's next round in the background and read its answer into the record. */
  private launch(record: TaskRecord): void {
    if (this.closed) return;
    const controller = new AbortController();
    this.running.set(record.id, controller);
    // The claim is renewed while the round runs (a round may run for long): only a dead instance lets it lapse.
    const renewal = setInterval(() => this.renew(record.id), Math.max(1, Math.floor(this.o.leaseMs / 3)));
    renewal.unref();
    const params: JsonObject = { name: record.tool, arguments: record.arguments, _meta: record.meta };
    if (record.next.requestState !== undefined) params.requestState = record.next.requestState;
    const answers = nextInputResponses(record);
    if (Object.keys(answers).length > 0) params.inputResponses = answers as JsonObject;
    const request: JsonRpcRequest = {
      jsonrpc: '2.0',
      id: `task-${record.id.slice(0, 12)}-${record.rounds + 1}`,
      method: 'tools/call',
      params,
    };
    // A guard that turns the round away for now says when to come back (429 or 503 with Retry-After).
    let comeBackMs: number | undefined;
    const env = {
      principal: record.principal ?? undefined,
      signal: controller.signal,
      // Nobody holds this round's response stream: progress and log notifications go nowhere.
      notify: () => undefined,
      overrideHttpStatus: (status: number, headers: Readonly<Record<string, string>>) => {
        const seconds = Number(headers['retry-after'] ?? headers['Retry-After']);
        if ((status === 429 || status === 503) && Number.isFinite(seconds) && seconds >= 0)
          comeBackMs = Math.max(this.o.pollIntervalMs, Math.ceil(seconds * 1000));
      },
      taskId: record.id,
    };
    const settle = (answer: { result?: JsonObject; error?: JsonObject }) => {
      clearInterval(renewal);
      this.running.delete(record.id);
      // A closed instance writes nothing more: its tasks are another instance's once their claims lapse.
      if (this.closed) return;
      return this.settle(record.id, answer, comeBackMs);
    };
    Promise.resolve()
      .then(() => this.o.route(request, env))
      .then(
        (response) =>
          settle(
            'error' in response && response.error
              ? { error: response.error as unknown as JsonObject }
              : { result: (response as { result: JsonObject }).result },
          ),
        (error: unknown) =>
          settle({
            error: { code: ErrorCode.InternalError, message: `Internal error: ${messageOf(error)}` },
          }),
      )
      .catch((error: unknown) =>
        this.o.logger.error({ task: record.id, err: messageOf(error) }, 'task round could not be recorded'),
      );
  }

  private renew(id: string): void {
    if (this.closed) return;
    const until = this.now() + this.o.leaseMs;
    this.o.book
      .update(id, (record) =>
        record.lease?.holder === this.holder
          ? { ...record, lease: { holder: this.holder, until } }
          : undefined,
      )
      .catch((error: unknown) =>
        this.o.logger.warn({ task: id, err: messageOf(error) }, 'task lease could not be renewed'),
      );
  }

  private async settle(
    id: string,
    answer: { result?: JsonObject; error?: JsonObject },
    comeBackMs?: number,
  ): Promise<void> {
    const now = this.now();
    let updated: Awaited<ReturnType<TaskBook['update']>>;
    try {
      updated = await this.o.book.update(id, this.settled(answer, comeBackMs, now));
    } catch (error) {
      // A result the store cannot keep (over its value limit): the task fails saying so, rather than being left
      // claimed and run again by another instance when its lease lapses.
      if (!(error instanceof MrtrError && error.code === 'ERR_INVALID_ARGUMENT')) throw error;
      const tooLarge = {
        error: {
          code: ErrorCode.InternalError,
          message: `Internal error: the task's answer is larger than the task store keeps (${error.message})`,
        },
      };
      updated = await this.o.book.update(id, this.settled(tooLarge, undefined, now));
    }
    if (updated?.changed) {
      this.emit(updated.record);
      this.ended(updated.record);
      this.schedule(updated.record);
    }
  }

  /** An ended task no longer counts against its principal's limit. */
  private ended(record: TaskRecord): void {
    if (!isTerminal(record.status)) return;
    this.o.open
      .remove(ownerOf(record.principal), record.id)
      .catch((error: unknown) =>
        this.o.logger.warn({ task: record.id, err: messageOf(error) }, 'ended task still counted'),
      );
  }

  /** How a round's answer changes the record, for the compare-and-set loop. */
  private settled(
    answer: { result?: JsonObject; error?: JsonObject },
    comeBackMs: number | undefined,
    now: number,
  ): (record: TaskRecord) => TaskRecord | undefined {
    return (record) => {
      // Another instance took the round over (our claim lapsed), or the task ended meanwhile (cancelled).
      if (record.lease?.holder !== this.holder) return undefined;
      if (isTerminal(record.status)) {
        const next = { ...record, updatedAt: now };
        delete next.lease;
        return next;
      }
      if (answer.error && comeBackMs !== undefined)
        return retryLater(record, comeBackMs, `turned away for now: ${String(answer.error.message)}`, now);
      return afterRound(record, answer, now);
    };
  }

  /**
   * The ids among `ids` that `principal` owns, each watched: `listener` is told every change this instance makes to
   * it (changes made on another instance are seen by polling tasks/get). Returns the agreed ids and a stop function.
   */
  async watch(
    ids: readonly unknown[],
    principal: Principal | undefined,
    listener: (task: DetailedTask) => void,
  ): Promise<{ agreed: string[]; stop: () => void }> {
    const agreed: string[] = [];
    for (const id of ids) {
      if (agreed.includes(id as string)) continue;
      try {
        await this.owned(id, principal);
        agreed.push(id as string);
      } catch (error) {
        // Not the caller's (or not a task): left out of the acknowledgement, as the spec asks. A store that fails
        // fails the request.
        if (!(error instanceof McpError)) throw error;
      }
    }
    for (const id of agreed) {
      let set = this.watchers.get(id);
      if (!set) {
        set = new Set();
        this.watchers.set(id, set);
      }
      set.add(listener);
    }
    const stop = () => {
      for (const id of agreed) {
        const set = this.watchers.get(id);
        set?.delete(listener);
        if (set?.size === 0) this.watchers.delete(id);
      }
    };
    return { agreed, stop };
  }

  private emit(record: TaskRecord): void {
    const set = this.watchers.get(record.id);
    if (!set) return;
    const task = detailedTask(record);
    for (const listener of [...set]) listener(task);
  }

  /** A task waiting on the server's side checks again when due, on this instance (any other may too). */
  private schedule(record: TaskRecord): void {
    if (this.closed || record.status !== 'working' || record.checkAt === undefined) return;
    this.unschedule(record.id);
    const timer = setTimeout(
      () => {
        this.timers.delete(record.id);
        this.claim(record.id, true).then(
          (claimed) => claimed && this.launch(claimed),
          (error: unknown) =>
            this.o.logger.warn({ task: record.id, err: messageOf(error) }, 'task check could not start'),
        );
      },
      Math.max(0, record.checkAt - this.now()),
    );
    timer.unref();
    this.timers.set(record.id, timer);
  }

  private unschedule(id: string): void {
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
  }

  /** An audit event for a transition that ran no round. */
  private transition(
    record: TaskRecord,
    requestId: string | number,
    method: string,
    now: number,
    ended?: { outcome: 'cancelled'; reason: string },
  ): RoundEvent {
    return {
      requestId,
      method,
      target: record.tool,
      arguments: record.arguments,
      principal: record.principal ?? undefined,
      round: record.rounds,
      // The call's flow, when the task knows it: a cancel then ends that flow in the trail.
      flowId: record.flowId,
      inputResponses: undefined,
      inputRequests: undefined,
      outcome: ended?.outcome ?? 'complete',
      reason: ended?.reason,
      decidedBy: undefined,
      steps: [],
      notes: { task: { id: record.id, status: record.status } },
      sensitive: undefined,
      startedAt: now,
      durationMs: 0,
    };
  }
}

function samePrincipal(owner: Principal | null, caller: Principal | undefined): boolean {
  if (owner === null || caller === undefined) return owner === null && caller === undefined;
  return whoIs(owner) === whoIs(caller);
}

/** The same parts a sealed state is bound to: issuer, subject and client. Roles and scopes may change between calls. */
function whoIs(p: Principal): string {
  return JSON.stringify([p.issuer ?? null, p.subject, p.clientId ?? null]);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
