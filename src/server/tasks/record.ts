// A task as the shared store keeps it, and the pure steps that move it on: a round's answer read into it, the
// client's answers taken in, a cancel. No I/O here: task-book.ts stores records, task-runner.ts runs their rounds.
//
// A task runs its tool as MRTR rounds on the server's side: the record carries what the client would have carried
// (the sealed requestState, the answers gathered for the next round), so any instance can run the next round, and
// every round goes through the same pipeline — guards, sealed state, answer checks, audit — as a client's would.
import {
  type DetailedTask,
  type InputResponse,
  type JsonObject,
  META_HUMAN_REQUIRED,
  META_PROGRESS,
  META_RETRY_AFTER_MS,
  type TaskStatus,
} from '../../protocol/index.js';
import type { Principal } from '../context.js';

export interface AskedQuestion {
  /** The flow's own key for it (what the next round's inputResponses use). */
  key: string;
  request: JsonObject;
}

export interface TaskRecord {
  v: 1;
  id: string;
  /** Who may see and steer the task: the caller's principal at creation (null when the server has no auth). */
  principal: Principal | null;
  tool: string;
  arguments: JsonObject;
  /** The creating request's `_meta` (capabilities, version, client info): every round of the task carries it. */
  meta: JsonObject;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: number;
  updatedAt: number;
  ttlMs: number;
  pollIntervalMs: number;
  /** What the next round sends: the sealed state, and the answers gathered for it under the flow's keys. */
  next: { requestState?: string; answers: Record<string, InputResponse> };
  /** Questions waiting for the client, under task keys (unique over the task's lifetime). */
  asked: Record<string, AskedQuestion>;
  /** Every task key ever shown to the client: a key is never used for a second question. */
  issuedKeys: string[];
  /**
   * Flow keys answered "accept" on the client's behalf in the next round: the question only waits for a person
   * elsewhere (an approver; a second factor on a page the client already opened), so the round re-checks it.
   */
  waitingKeys: string[];
  /** URL questions the client accepted (opened): the same URL asked again means "still waiting for the person". */
  openedUrls: string[];
  /** When a waiting task's next check is due (ms since the epoch). */
  checkAt?: number;
  /** The call's flow id in the audit trail (when the server observes rounds): a cancel's event joins that flow. */
  flowId?: string;
  /** Rounds run so far. */
  rounds: number;
  /** A round in flight: the instance running it, and until when its claim holds (another instance may then). */
  lease?: { holder: string; until: number };
  result?: JsonObject;
  error?: JsonObject;
}

/** What the client sees of a record: tasks/get's DetailedTask. */
export function detailedTask(record: TaskRecord): DetailedTask {
  const task: DetailedTask = {
    taskId: record.id,
    status: record.status,
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(record.updatedAt).toISOString(),
    ttlMs: record.ttlMs,
    pollIntervalMs: record.pollIntervalMs,
  };
  if (record.statusMessage !== undefined) task.statusMessage = record.statusMessage;
  if (record.status === 'input_required') {
    const inputRequests: JsonObject = Object.create(null);
    for (const [key, q] of Object.entries(record.asked)) inputRequests[key] = q.request;
    task.inputRequests = inputRequests;
  }
  if (record.status === 'completed' && record.result) task.result = record.result;
  if (record.status === 'failed' && record.error) task.error = record.error;
  return task;
}

/** The flow's answers for the next round: the client's, and "accept" for every question only a person elsewhere ends. */
export function nextInputResponses(record: TaskRecord): Record<string, InputResponse> {
  const answers: Record<string, InputResponse> = Object.create(null);
  for (const [key, value] of Object.entries(record.next.answers)) answers[key] = value;
  for (const key of record.waitingKeys) answers[key] = { action: 'accept' } as InputResponse;
  return answers;
}

/** A round ended: read its JSON-RPC answer into the record (a copy). */
export function afterRound(
  record: TaskRecord,
  answer: { result?: JsonObject; error?: JsonObject },
  now: number,
): TaskRecord {
  const next: TaskRecord = { ...record, updatedAt: now, rounds: record.rounds + 1 };
  delete next.lease;
  delete next.checkAt;
  if (answer.error) {
    next.status = 'failed';
    next.error = answer.error;
    next.statusMessage = String(answer.error.message ?? 'the request failed');
    return settled(next);
  }
  const result = answer.result ?? {};
  if (result.resultType !== 'input_required') {
    next.status = 'completed';
    next.result = result;
    if (result.isError === true) next.statusMessage = 'completed with a tool error';
    else delete next.statusMessage;
    return settled(next);
  }
  return askedAgain(next, result, now);
}

/** The task's questions from an input_required result: surfaced to the client, or waited out on the server's side. */
export function askedAgain(record: TaskRecord, result: JsonObject, now: number): TaskRecord {
  const next: TaskRecord = {
    ...record,
    asked: Object.create(null),
    waitingKeys: [],
    issuedKeys: [...record.issuedKeys],
    next: { answers: Object.create(null) },
  };
  if (typeof result.requestState === 'string') next.next.requestState = result.requestState;
  const requests = (result.inputRequests ?? {}) as Record<string, JsonObject>;
  const waitingFor: string[] = [];
  for (const [key, request] of Object.entries(requests)) {
    const person = waitsForPerson(request, next.openedUrls);
    if (person !== undefined) {
      next.waitingKeys.push(key);
      waitingFor.push(person);
      continue;
    }
    const taskKey = freshKey(key, next.issuedKeys);
    next.issuedKeys.push(taskKey);
    next.asked[taskKey] = { key, request };
  }
  if (Object.keys(next.asked).length > 0) {
    next.status = 'input_required';
    next.statusMessage = 'waiting for the client to answer';
    return next;
  }
  // Nothing for the client to answer: the task waits on the server's side and checks again.
  next.status = 'working';
  next.statusMessage = waitingFor[0] ?? 'working';
  const retryAfter = (result._meta as JsonObject | undefined)?.[META_RETRY_AFTER_MS];
  next.checkAt =
    now + (typeof retryAfter === 'number' && retryAfter > 0 ? retryAfter : record.pollIntervalMs);
  return next;
}

/**
 * The round was turned away for now (a rate limit's 429, a replay guard's "still running" 503, with Retry-After): the
 * task keeps its state and answers and runs the same round again then, instead of failing.
 */
export function retryLater(record: TaskRecord, afterMs: number, why: string, now: number): TaskRecord {
  const next: TaskRecord = {
    ...record,
    status: 'working',
    statusMessage: why,
    updatedAt: now,
    checkAt: now + afterMs,
  };
  delete next.lease;
  return next;
}

/**
 * Takes the client's answers to questions it was asked; others are ignored, as the spec says (keys never issued,
 * answered already, or superseded). Returns the new record, or undefined when nothing was taken.
 */
export function withAnswers(
  record: TaskRecord,
  inputResponses: Readonly<Record<string, unknown>>,
  now: number,
): TaskRecord | undefined {
  if (record.status !== 'input_required') return undefined;
  const asked = { ...record.asked };
  const answers = { ...record.next.answers };
  const openedUrls = [...record.openedUrls];
  let taken = 0;
  for (const [taskKey, response] of Object.entries(inputResponses)) {
    if (!Object.hasOwn(asked, taskKey)) continue;
    const question = asked[taskKey]!;
    answers[question.key] = response as InputResponse;
    delete asked[taskKey];
    taken += 1;
    // Only a second factor's link counts as opened: a link opened for any other question does not make a second
    // factor at the same address one the client has seen (it would be waited out, never shown).
    const url = urlOf(question.request);
    if (
      url !== undefined &&
      humanRequired(question.request) === 'second_factor' &&
      (response as { action?: unknown } | null)?.action === 'accept' &&
      !openedUrls.includes(url)
    )
      openedUrls.push(url);
  }
  if (taken === 0) return undefined;
  const next: TaskRecord = {
    ...record,
    asked,
    openedUrls,
    next: { ...record.next, answers },
    updatedAt: now,
  };
  if (Object.keys(asked).length === 0) {
    next.status = 'working';
    next.statusMessage = 'working on the answers';
  }
  return next;
}

/** Cancelled, unless it already ended (a cancel of an ended task changes nothing: the ack is the same). */
export function cancelled(record: TaskRecord, now: number): TaskRecord | undefined {
  if (isTerminal(record.status)) return undefined;
  const next: TaskRecord = {
    ...record,
    status: 'cancelled',
    statusMessage: 'cancelled by the client',
    updatedAt: now,
  };
  return settled(next);
}

export function isTerminal(status: TaskStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/**
 * An ended task keeps only what tasks/get shows: no state, no questions, no arguments (the audit trail has them). A
 * failure record then always fits in the store, however large the call was.
 */
function settled(record: TaskRecord): TaskRecord {
  const next: TaskRecord = {
    ...record,
    arguments: {},
    meta: {},
    next: { answers: Object.create(null) },
    asked: Object.create(null),
    issuedKeys: [],
    waitingKeys: [],
    openedUrls: [],
  };
  delete next.checkAt;
  return next;
}

/**
 * A question that only a person elsewhere can end: an approval (its link is the requester's status page; the
 * client has nothing to answer), or a URL the client already opened in this task. Returns the line to show.
 */
function waitsForPerson(request: JsonObject, openedUrls: readonly string[]): string | undefined {
  const params = request.params as JsonObject | undefined;
  const meta = params?._meta as JsonObject | undefined;
  const progress = typeof meta?.[META_PROGRESS] === 'string' ? (meta[META_PROGRESS] as string) : undefined;
  if (meta?.[META_HUMAN_REQUIRED] === 'approval') return progress ?? 'waiting for approval';
  // Only a second factor is answered "opened" on the client's behalf: any other link asked again is the client's to
  // open again (the server asked it anew for a reason of its own).
  const url = urlOf(request);
  if (meta?.[META_HUMAN_REQUIRED] === 'second_factor' && url !== undefined && openedUrls.includes(url))
    return progress ?? 'waiting for the person at the link';
  return undefined;
}

function humanRequired(request: JsonObject): unknown {
  return ((request.params as JsonObject | undefined)?._meta as JsonObject | undefined)?.[META_HUMAN_REQUIRED];
}

function urlOf(request: JsonObject): string | undefined {
  const params = request.params as JsonObject | undefined;
  return request.method === 'elicitation/create' && params?.mode === 'url' && typeof params.url === 'string'
    ? params.url
    : undefined;
}

/** The flow's key if the task never used it, else the key with the first free `~n` suffix. */
function freshKey(key: string, issued: readonly string[]): string {
  if (!issued.includes(key)) return key;
  for (let n = 2; ; n++) {
    const candidate = `${key}~${n}`;
    if (!issued.includes(candidate)) return candidate;
  }
}
