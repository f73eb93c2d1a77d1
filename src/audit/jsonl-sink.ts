// JSON lines, to stdout or a file: best effort (an append resolves once the OS has the bytes, never after an fsync,
// and stdout may be a pipe that loses them). Each line is self-contained — an event with its seq, prev and hash, a
// checkpoint with its signed note, a writer's verifier key — so an export to a SIEM can still be verified offline.
// A file rotates by size: PATH is moved to PATH.000001, PATH.000002, … and a new PATH begins.
//
// The file stays open and each batch is one synchronous write on the serving thread: a write to the page cache costs
// a few microseconds, while opening, appending and closing per batch through the thread pool cost about 270 µs of CPU
// (bench/audit.mjs). Before each batch one stat tells whether PATH is still the open file: when a tool removed or moved
// it away (a log rotator's rename), the batch goes to a new PATH; `copytruncate` works too. The built-in size rotation
// keeps the chain readable in one place (PATH.000001, …), which a rotator's own names are not.
import {
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { makeParentDirectory } from '../files/index.js';
import type { ChainedEvent, ChainHead } from './chain.js';
import type { StoredCheckpoint } from './checkpoint.js';
import { AUDIT_DEFAULTS } from './defaults.js';
import { AuditError } from './errors.js';
import type { AuditRecord } from './record.js';
import type { AuditReader, AuditSink, EventFilter, StoredEvent } from './sink.js';

type Line =
  | { type: 'event'; hash: string; record: AuditRecord; text: string }
  | { type: 'checkpoint'; instance: string; seq: number; hash: string; note: string }
  | { type: 'key'; vkey: string };

/** PATH's rotated files, oldest first, then PATH itself. */
function filesOf(path: string): string[] {
  const dir = dirname(path);
  const base = basename(path);
  const rotated = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.startsWith(`${base}.`) && /^\d{6}$/.test(f.slice(base.length + 1)))
        .sort()
        .map((f) => join(dir, f))
    : [];
  return existsSync(path) ? [...rotated, path] : rotated;
}

/** How an event line begins: the record's own text follows, up to the line's last character. */
const EVENT_PREFIX = /^\{"type":"event","hash":"[0-9a-f]{64}","record":/;

function parseLines(text: string, where: string): Line[] {
  const lines: Line[] = [];
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    let line: Line;
    try {
      line = JSON.parse(raw) as Line;
    } catch {
      throw new AuditError('ERR_AUDIT_CORRUPT', `${where} line ${i + 1} is not JSON`);
    }
    if (!['event', 'checkpoint', 'key'].includes((line as { type?: string })?.type ?? ''))
      throw new AuditError('ERR_AUDIT_CORRUPT', `${where} line ${i + 1} is not an audit line`);
    if (line.type === 'event') {
      // The hash covers the record's bytes as written, so they are cut from the line, not serialised again.
      const prefix = EVENT_PREFIX.exec(raw);
      if (!prefix || !raw.endsWith('}'))
        throw new AuditError('ERR_AUDIT_CORRUPT', `${where} line ${i + 1} is not an event line as written`);
      line.text = raw.slice(prefix[0].length, -1);
    }
    lines.push(line);
  });
  return lines;
}

export class JsonlAuditSink implements AuditSink {
  readonly description: string;
  readonly durable = false;
  readonly #path: string;
  readonly #rotateBytes: number;
  #fd: number | undefined;
  /** The file `#fd` writes (inode and device), to tell whether PATH is still it. */
  #ino = 0;
  #dev = 0;
  #lastLines: Line[] = [];

  private constructor(path: string, rotateBytes: number) {
    this.#path = path;
    this.description = `jsonl:${path}`;
    this.#rotateBytes = rotateBytes;
  }

  static async open(
    path: string,
    options: { rotateBytes?: number | undefined } = {},
  ): Promise<JsonlAuditSink> {
    if (path !== '-') {
      makeParentDirectory(path);
      if (existsSync(path) && statSync(path).isDirectory())
        throw new AuditError('ERR_AUDIT_CONFIG', `${path} is a directory, not a JSON-lines file`);
    }
    const sink = new JsonlAuditSink(path, options.rotateBytes ?? AUDIT_DEFAULTS.jsonlRotateBytes);
    if (path !== '-')
      for (const f of filesOf(path)) sink.#lastLines.push(...parseLines(readFileSync(f, 'utf8'), f));
    return sink;
  }

  async head(instance: string): Promise<ChainHead | undefined> {
    // Read once at open: only a writer continuing its own chain asks, before it writes.
    let head: ChainHead | undefined;
    for (const line of this.#lastLines)
      if (line.type === 'event' && line.record.instance === instance)
        head = { seq: line.record.seq, hash: line.hash };
    this.#lastLines = [];
    return head;
  }

  async append(events: readonly ChainedEvent[], checkpoint: StoredCheckpoint | undefined): Promise<void> {
    let text = '';
    for (const e of events) text += `{"type":"event","hash":"${e.hash}","record":${e.text}}\n`;
    if (checkpoint) text += `${JSON.stringify({ type: 'checkpoint', ...checkpoint })}\n`;
    await this.#write(text);
  }

  async publishKey(verifierKey: string): Promise<void> {
    await this.#write(`${JSON.stringify({ type: 'key', vkey: verifierKey })}\n`);
  }

  async #write(text: string): Promise<void> {
    if (this.#path === '-') {
      await new Promise<void>((resolve, reject) =>
        process.stdout.write(text, (error) => (error ? reject(error) : resolve())),
      );
      return;
    }
    const buffer = Buffer.from(text);
    // One stat per batch: is PATH still the file this descriptor writes? A file removed or moved away (a log
    // rotator) would take every later event with it while rounds are answered as recorded; and its size now, which
    // copytruncate resets under us.
    const onDisk = statSync(this.#path, { throwIfNoEntry: false });
    if (this.#fd !== undefined && (onDisk?.ino !== this.#ino || onDisk?.dev !== this.#dev)) this.#closeFile();
    let size = onDisk?.size ?? 0;
    // Only a regular file is rotated: a directory or a device at PATH is left where it is (the open names it).
    if (onDisk?.isFile() && size > 0 && size + buffer.length > this.#rotateBytes) {
      const last = filesOf(this.#path).at(-2);
      const n = last && last !== this.#path ? Number(last.slice(-6)) + 1 : 1;
      this.#closeFile();
      renameSync(this.#path, `${this.#path}.${String(n).padStart(6, '0')}`);
      size = 0;
    }
    if (this.#fd === undefined) {
      const fd = openSync(this.#path, 'a');
      const opened = fstatSync(fd);
      this.#fd = fd;
      this.#ino = opened.ino;
      this.#dev = opened.dev;
      size = opened.size;
    }
    let written = 0;
    try {
      // A regular file takes the whole buffer at once but for a full disk; loop rather than lose a tail silently.
      while (written < buffer.length)
        written += writeSync(this.#fd, buffer, written, buffer.length - written);
    } catch (error) {
      // The batch fails as a whole (its rounds are answered -32603 and the chain does not advance), so nothing of it
      // may stay: whole lines would be events of rounds that failed, with seqs the next batch takes again, and a
      // partial line makes the file unreadable. Removing what was written frees the space it took.
      if (written > 0)
        try {
          ftruncateSync(this.#fd, size);
        } catch {
          // Not a regular file (a device, a FIFO): what was written cannot be taken back; the write's error says why.
        }
      throw error;
    }
  }

  #closeFile(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
  }

  async close(): Promise<void> {
    this.#closeFile();
  }
}

export class JsonlAuditReader implements AuditReader {
  readonly description: string;
  readonly #lines: Line[];

  private constructor(description: string, lines: Line[]) {
    this.description = description;
    this.#lines = lines;
  }

  /** Read PATH (and its rotated files), or `-`: standard input. */
  static async open(path: string): Promise<JsonlAuditReader> {
    if (path === '-') {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return new JsonlAuditReader('jsonl:-', parseLines(Buffer.concat(chunks).toString('utf8'), 'stdin'));
    }
    const files = filesOf(path);
    if (files.length === 0) throw new AuditError('ERR_AUDIT_CONFIG', `no audit file at ${path}`);
    const lines = files.flatMap((f) => parseLines(readFileSync(f, 'utf8'), f));
    return new JsonlAuditReader(`jsonl:${path}`, lines);
  }

  async events(filter: EventFilter = {}): Promise<StoredEvent[]> {
    const events: StoredEvent[] = [];
    for (const line of this.#lines) {
      if (line.type !== 'event') continue;
      const r = line.record;
      if (filter.flowId !== undefined && r.flowId !== filter.flowId) continue;
      if (filter.since !== undefined && !(r.time >= filter.since)) continue;
      events.push({
        instance: String(r.instance),
        seq: Number(r.seq),
        hash: line.hash,
        text: line.text,
      });
    }
    return events.sort((a, b) =>
      a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : a.seq - b.seq,
    );
  }

  async *eventPages(pageSize: number): AsyncIterable<StoredEvent[]> {
    // Already in memory: pages only keep the verifier's rhythm.
    const events = await this.events();
    for (let i = 0; i < events.length; i += pageSize) yield events.slice(i, i + pageSize);
  }

  async checkpoints(): Promise<StoredCheckpoint[]> {
    return this.#lines
      .filter((l): l is Extract<Line, { type: 'checkpoint' }> => l.type === 'checkpoint')
      .map(({ instance, seq, hash, note }) => ({ instance, seq, hash, note }));
  }

  async publishedKeys(): Promise<string[]> {
    return [...new Set(this.#lines.filter((l) => l.type === 'key').map((l) => (l as { vkey: string }).vkey))];
  }

  async close(): Promise<void> {}
}
