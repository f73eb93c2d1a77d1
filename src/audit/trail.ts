// The audit trail: a round observer that chains every round's event and writes it through a sink before the round's
// answer is sent. Events that arrive while a write is in flight go into the next one (group commit), so a commit is
// shared by every round in flight; a full queue makes new rounds wait for room, and nothing is ever dropped.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { AuditSigner } from './audit-key.js';
import { type ChainedEvent, type ChainHead, chain, GENESIS, unchainedText } from './chain.js';
import { type StoredCheckpoint, sealCheckpoint } from './checkpoint.js';
import { AUDIT_DEFAULTS } from './defaults.js';
import { AuditError, auditConfigError } from './errors.js';
import {
  type ObservedConnectionEvent,
  type ObservedDefinitionChange,
  type ObservedIntent,
  type ObservedRound,
  toAuditRecord,
  toConnectionRecord,
  toDefinitionChangeRecord,
  toIntentRecord,
  type UnchainedRecord,
} from './record.js';
import { Redactor } from './redact.js';
import type { AuditSink } from './sink.js';

export interface AuditTrailOptions {
  /**
   * This writer's name: its own chain. Unique among the writers running at once (two with one name collide and
   * fail closed); a writer restarted under the same name continues its chain. Default: host, pid and a random tag.
   */
  instance?: string;
  /** The checkpoint signing key (`PRIVATE+KEY+…`, `mrtr audit keygen`); default MRTR_AUDIT_KEY, else a per-process key. */
  key?: AuditSigner | string;
  /** Key of the redaction digests (default: derived from the signing key, so a fleet sharing it correlates). */
  redactionKey?: Buffer;
  checkpointEvery?: number;
  checkpointIntervalMs?: number;
  maxQueuedEvents?: number;
  maxBatchEvents?: number;
  /** Told of problems worth a line on stderr (a per-process key). */
  warn?: (message: string) => void;
  /** The clock for checkpoints (tests). */
  now?: () => Date;
}

const INSTANCE = /^[A-Za-z0-9._:@/-]{1,128}$/;

interface Pending {
  record: UnchainedRecord;
  /** Its JSON text, made when observed (chain() appends seq and prev). */
  text: string;
  /** Set on a round's intent: its outcome finds the intent's seq under this key once it is durable. */
  intent: object | undefined;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** What a trail has refused to record, since it opened (each such round failed, and ran nothing if it was an intent). */
export interface AuditTrailStats {
  /** Rounds whose intent could not be recorded: their handler never ran. */
  intentsNotRecorded: number;
  /** Rounds whose outcome could not be recorded: their answer was replaced by -32603. */
  outcomesNotRecorded: number;
}

export class AuditTrail {
  readonly instance: string;
  readonly #sink: AuditSink;
  readonly #signer: AuditSigner;
  readonly #redactor: Redactor;
  readonly #every: number;
  readonly #maxQueued: number;
  readonly #maxBatch: number;
  readonly #now: () => Date;
  readonly #timer: NodeJS.Timeout;
  #head: ChainHead;
  #sealedSeq: number;
  #sinceCheckpoint = 0;
  #checkpointDue = false;
  #queue: Pending[] = [];
  readonly #overflow: Pending[] = [];
  #writing = false;
  /** Events of the batch being written: still waiting for the disk. */
  #inFlight = 0;
  /** Rounds waiting to start until fewer than maxQueuedEvents events wait for the disk. */
  readonly #waitingForRoom: Array<() => void> = [];
  #scheduled = false;
  #closed = false;
  #idle: Array<() => void> = [];
  #lastCheckpoint: StoredCheckpoint | undefined;
  /** Where each durable intent stands in the chain, for its outcome's `intentSeq`; gone with the round. */
  readonly #intentSeqs = new WeakMap<object, number>();
  readonly #stats: AuditTrailStats = { intentsNotRecorded: 0, outcomesNotRecorded: 0 };

  private constructor(
    sink: AuditSink,
    signer: AuditSigner,
    instance: string,
    head: ChainHead,
    o: AuditTrailOptions,
  ) {
    this.#sink = sink;
    this.#signer = signer;
    this.instance = instance;
    this.#head = head;
    this.#sealedSeq = head.seq;
    this.#redactor = new Redactor(o.redactionKey ?? signer.derive('redaction'));
    this.#every = o.checkpointEvery ?? AUDIT_DEFAULTS.checkpointEvery;
    this.#maxQueued = o.maxQueuedEvents ?? AUDIT_DEFAULTS.maxQueuedEvents;
    this.#maxBatch = o.maxBatchEvents ?? AUDIT_DEFAULTS.maxBatchEvents;
    this.#now = o.now ?? (() => new Date());
    this.#timer = setInterval(() => {
      if (this.#head.seq > this.#sealedSeq) {
        this.#checkpointDue = true;
        this.#schedule();
      }
    }, o.checkpointIntervalMs ?? AUDIT_DEFAULTS.checkpointIntervalMs);
    this.#timer.unref();
  }

  /** Open a writer on `sink`: continue its chain if the sink has one under this instance name. */
  static async open(sink: AuditSink, options: AuditTrailOptions = {}): Promise<AuditTrail> {
    for (const name of [
      'checkpointEvery',
      'checkpointIntervalMs',
      'maxQueuedEvents',
      'maxBatchEvents',
    ] as const) {
      const v = options[name];
      if (v !== undefined && !(Number.isInteger(v) && v >= 1 && v <= 2 ** 31 - 1))
        throw auditConfigError(`AuditTrail: ${name} must be a positive integer, got ${v}`);
    }
    const instance = options.instance ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    if (!INSTANCE.test(instance))
      throw auditConfigError(
        `AuditTrail: instance "${instance}" must be 1-128 characters of letters, digits and . _ : @ / -`,
      );
    const signer = AuditTrail.signer(options);
    await sink.publishKey(signer.verifier.text);
    const stored = await sink.head(instance);
    const head = stored ?? { seq: 0, hash: GENESIS };
    // chain() writes the head into the next event's text as it is (no JSON.stringify), so what an edited sink says
    // there must be a place in a chain: a quote in the hash would add members to the event, a seq stored as text
    // would concatenate.
    if (stored && !(Number.isSafeInteger(stored.seq) && stored.seq >= 1))
      throw new AuditError(
        'ERR_AUDIT_CORRUPT',
        `audit sink ${sink.description}: ${instance}'s last event has seq ${JSON.stringify(stored.seq)}, which is not a positive integer: the sink was edited; run mrtr audit verify`,
      );
    if (stored && !/^[0-9a-f]{64}$/.test(stored.hash))
      throw new AuditError(
        'ERR_AUDIT_CORRUPT',
        `audit sink ${sink.description}: ${instance}'s last event has hash ${JSON.stringify(stored.hash)}, which is not a SHA-256 (64 hex digits): the sink was edited; run mrtr audit verify`,
      );
    return new AuditTrail(sink, signer, instance, head, options);
  }

  private static signer(options: AuditTrailOptions): AuditSigner {
    const key = options.key ?? process.env.MRTR_AUDIT_KEY;
    if (key instanceof AuditSigner) return key;
    if (key !== undefined && key.trim() !== '') return AuditSigner.parse(key);
    const signer = AuditSigner.generate(AUDIT_DEFAULTS.keyName);
    options.warn?.(
      `no audit key configured (MRTR_AUDIT_KEY): checkpoints are signed with a per-process key, ${signer.verifier.text} — ` +
        'keep that verifier key elsewhere, or give every instance a key from `mrtr audit keygen`',
    );
    return signer;
  }

  get sink(): AuditSink {
    return this.#sink;
  }
  /** The verifier key of this writer's checkpoints (`name+id+base64`). */
  get verifierKey(): string {
    return this.#signer.verifier.text;
  }
  /** Where the chain stands in the sink (only what is durable). */
  get head(): ChainHead {
    return { ...this.#head };
  }
  get lastCheckpoint(): StoredCheckpoint | undefined {
    return this.#lastCheckpoint;
  }
  /** Events waiting for the sink now: queued, or in the batch being written (what `admit` bounds). */
  get backlog(): number {
    return this.#waiting();
  }
  /** Counts of rounds this trail could not record (a sink down, a record with no JSON form). */
  get stats(): AuditTrailStats {
    return { ...this.#stats };
  }

  /**
   * Asked before each round starts: undefined while fewer than maxQueuedEvents events wait for the disk, else a
   * promise that resolves when a write has made room. A slow disk so slows new rounds down before they act, instead
   * of letting them run while their events pile up (rounds already running still queue theirs: nothing is dropped).
   */
  admit(): Promise<void> | undefined {
    if (this.#closed || this.#waiting() < this.#maxQueued) return undefined;
    return new Promise((resolve) => this.#waitingForRoom.push(resolve));
  }

  #waiting(): number {
    return this.#queue.length + this.#overflow.length + this.#inFlight;
  }

  /** Let waiting rounds start, one per free place (each adds about one event when it ends). */
  #makeRoom(): void {
    let room = this.#maxQueued - this.#waiting();
    while (room-- > 0 && this.#waitingForRoom.length > 0) this.#waitingForRoom.shift()!();
  }

  /**
   * A round observer's write-ahead hook: the round's intent becomes a `proposed` event, and the promise resolves once
   * it is durable. The server runs the round's handler only then, so every effect has its intent in the trail first;
   * a rejection (the sink is down, the arguments have no JSON form) keeps the handler from running at all.
   */
  intend(intent: ObservedIntent): Promise<void> {
    return this.#enqueue(() => toIntentRecord(intent, this.instance, this.#redactor), intent).catch(
      (error: unknown) => {
        this.#stats.intentsNotRecorded++;
        throw error;
      },
    );
  }

  /** A round observer: resolves once the round's event is durable in the sink. */
  observe(event: ObservedRound): Promise<void> {
    const intentSeq = event.intent === undefined ? undefined : this.#intentSeqs.get(event.intent);
    return this.#enqueue(
      () => toAuditRecord(event, this.instance, this.#redactor, intentSeq),
      undefined,
    ).catch((error: unknown) => {
      this.#stats.outcomesNotRecorded++;
      throw error;
    });
  }

  /**
   * A gateway saw a pinned tool listed with another definition (and withholds it): recorded in the chain as an event
   * of its own (`tool_definition_changed`). Resolves once durable.
   */
  definitionChanged(change: ObservedDefinitionChange): Promise<void> {
    return this.#enqueue(() => toDefinitionChangeRecord(change, this.instance, this.#redactor), undefined);
  }

  /**
   * A person's connection was made, used, refreshed, revoked or disconnected: recorded in the chain as an event of its
   * own (`connection`). Give it the connections' events (`onEvent`); none holds a token. Resolves once durable.
   */
  connectionEvent(event: ObservedConnectionEvent): Promise<void> {
    return this.#enqueue(() => toConnectionRecord(event, this.instance, this.#redactor), undefined);
  }

  #enqueue(make: () => UnchainedRecord, intent: object | undefined): Promise<void> {
    if (this.#closed) return Promise.reject(new AuditError('ERR_AUDIT_CLOSED', 'the audit trail is closed'));
    let record: UnchainedRecord;
    let text: string;
    try {
      record = make();
      // JSON.stringify fails on what has no JSON form (a bigint note): that round fails alone.
      text = unchainedText(record);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<void>((resolve, reject) => {
      const pending = { record, text, intent, resolve, reject };
      if (this.#queue.length >= this.#maxQueued) this.#overflow.push(pending);
      else this.#queue.push(pending);
      this.#schedule();
    });
  }

  /** Seal a checkpoint of everything written so far (also done every N events, every T seconds and at close). */
  async checkpoint(): Promise<StoredCheckpoint | undefined> {
    this.#checkpointDue = true;
    this.#schedule();
    await this.#drained();
    return this.#lastCheckpoint;
  }

  /** Write what is queued, seal a last checkpoint, close the sink. Events observed afterwards are refused. */
  async close(): Promise<void> {
    if (this.#closed) return;
    clearInterval(this.#timer);
    await this.checkpoint();
    this.#closed = true;
    // Rounds still waiting for room start, and are refused when they report (the trail is closed).
    for (const start of this.#waitingForRoom.splice(0)) start();
    await this.#sink.close();
  }

  #drained(): Promise<void> {
    if (!this.#writing && !this.#scheduled && this.#queue.length === 0 && !this.#checkpointDue)
      return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  // One turn's events become one batch: setImmediate lets every round answered in this turn join it.
  #schedule(): void {
    if (this.#writing || this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.#write();
    });
  }

  async #write(): Promise<void> {
    if (this.#queue.length === 0 && !this.#checkpointDue) {
      for (const done of this.#idle.splice(0)) done();
      return;
    }
    this.#writing = true;
    const batch = this.#queue.splice(0, this.#maxBatch);
    this.#inFlight = batch.length;
    while (this.#overflow.length > 0 && this.#queue.length < this.#maxQueued)
      this.#queue.push(this.#overflow.shift()!);
    let head = this.#head;
    const events: ChainedEvent[] = [];
    for (const pending of batch) {
      const chained = chain(pending.record, pending.text, head);
      events.push(chained);
      head = { seq: chained.record.seq, hash: chained.hash };
    }
    const seal = this.#checkpointDue || this.#sinceCheckpoint + events.length >= this.#every;
    const checkpoint =
      seal && head.seq > this.#sealedSeq
        ? sealCheckpoint(this.instance, head, this.#signer, this.#now())
        : undefined;
    try {
      if (events.length > 0 || checkpoint) await this.#sink.append(events, checkpoint);
    } catch (error) {
      // Nothing of the batch is stored: the chain stays where it was, and its rounds are answered -32603.
      const failure = new AuditError('ERR_AUDIT_UNAVAILABLE', `audit sink ${this.#sink.description} failed`, {
        cause: error,
      });
      for (const pending of batch) pending.reject(failure);
      if (seal) this.#checkpointDue = false;
      this.#writing = false;
      this.#continue();
      return;
    }
    this.#head = head;
    if (seal) this.#checkpointDue = false;
    if (checkpoint) {
      this.#sinceCheckpoint = 0;
      this.#sealedSeq = head.seq;
      this.#lastCheckpoint = checkpoint;
    } else this.#sinceCheckpoint += events.length;
    for (let i = 0; i < batch.length; i++) {
      const pending = batch[i]!;
      if (pending.intent !== undefined) this.#intentSeqs.set(pending.intent, events[i]!.record.seq);
      pending.resolve();
    }
    this.#writing = false;
    this.#continue();
  }

  #continue(): void {
    this.#inFlight = 0;
    this.#makeRoom();
    if (this.#queue.length > 0 || this.#checkpointDue) void this.#write();
    else for (const done of this.#idle.splice(0)) done();
  }
}
