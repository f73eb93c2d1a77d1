// A resolver that asks a person in a terminal: form fields as prompts with validation and re-asks, a review step,
// decline and cancel at any prompt, and URL mode shown as a link the person opens themselves.
import { createInterface, type Interface } from 'node:readline';
import { Writable } from 'node:stream';
import { type ElicitResult, type ElicitUrlRequest, emptyRecord, type JsonObject } from '../protocol/index.js';
import { RequestAborted } from './errors.js';
import { type FieldValue, type FormField, parseTyped, readForm, showSent, showValue } from './form.js';
import type { InputQuestion } from './input.js';
import { inspectLink } from './link.js';
import { oneAtATime } from './one-at-a-time.js';
import type { InputResolver, ResolveContext } from './resolvers.js';
import { joinSafe, type SafeText, safe, safeLine, safeLines } from './safe-text.js';

export interface TerminalResolverOptions {
  /** Default process.stdin. */
  input?: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Default process.stderr (so a command's stdout stays clean for its result). */
  output?: NodeJS.WritableStream & { isTTY?: boolean };
  /** ANSI colours. Default: output is a TTY and NO_COLOR is unset. */
  color?: boolean;
  /** Called on Ctrl-C while a question is open (the call should be aborted). */
  onInterrupt?: () => void;
  /** Ask "Send?" after a form is filled. Default true (elicitation.mdx: let people review before sending). */
  review?: boolean;
  /** Open a link in the person's browser; offered as `[o]pen` after the link is shown, never done unasked. */
  openUrl?: (url: string) => void;
  /**
   * How long to wait between checks while an approval is pending (the same approval link asked again): the
   * first wait, doubled each time up to 30 s. Default 5000 ms.
   */
  pollMs?: number;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const MAX_POLL_MS = 30_000;

/** Resolves after `ms`, or rejects when `signal` aborts (Ctrl-C stops a wait as it stops a question). */
function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new RequestAborted(signal.reason));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(new RequestAborted(signal.reason));
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}

/** Internal: the input ended; the resolver turns it into a RequestAborted before it leaves this file. */
class Closed extends Error {}

type Paint = (s: SafeText) => SafeText;
interface Style {
  bold: Paint;
  dim: Paint;
  red: Paint;
  green: Paint;
  yellow: Paint;
  cyan: Paint;
}

function style(color: boolean): Style {
  const wrap =
    (open: number, close: number): Paint =>
    (s) =>
      color ? (`\x1b[${open}m${s}\x1b[${close}m` as SafeText) : s;
  return {
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
  };
}

/** Reads answers line by line, one question at a time. */
class LineReader {
  private rl: Interface | undefined;
  private readonly queue: string[] = [];
  private waiter: { resolve: (l: string) => void; reject: (e: Error) => void } | undefined;
  private ended = false;
  private readonly tty: boolean;

  constructor(
    private readonly input: NodeJS.ReadableStream & { isTTY?: boolean },
    private readonly output: NodeJS.WritableStream & { isTTY?: boolean },
    private readonly onInterrupt: (() => void) | undefined,
  ) {
    this.tty = input.isTTY === true;
  }

  private get terminal(): boolean {
    return this.tty && this.output.isTTY === true;
  }

  private open(mask: boolean): Interface {
    if (this.rl) return this.rl;
    // A secret is typed into an interface that echoes nowhere (on a TTY it is opened afresh for each question).
    const rl = createInterface({
      input: this.input,
      output: mask && this.terminal ? new Writable({ write: (_c, _e, done) => done() }) : this.output,
      terminal: this.terminal,
    });
    rl.on('line', (line) => {
      const w = this.waiter;
      if (w) {
        this.waiter = undefined;
        w.resolve(line);
      } else this.queue.push(line);
    });
    rl.on('close', () => {
      if (this.rl === rl) this.rl = undefined;
      // On a TTY the interface is closed on purpose after each question; on a pipe, close means end of input.
      if (!this.tty) this.ended = true;
      const w = this.waiter;
      this.waiter = undefined;
      w?.reject(new Closed('input closed'));
    });
    rl.on('SIGINT', () => {
      const w = this.waiter;
      this.waiter = undefined;
      w?.reject(new RequestAborted(new RequestAborted(undefined, 'interrupted')));
      this.onInterrupt?.();
    });
    this.rl = rl;
    return rl;
  }

  /** Ask one question; with `mask`, what is typed is not echoed (a queued answer is shown as dots). */
  async ask(prompt: SafeText, signal: AbortSignal, mask = false): Promise<string> {
    if (signal.aborted) throw new RequestAborted(signal.reason);
    const queued = this.queue.shift();
    if (queued !== undefined) {
      this.output.write(`${prompt}${mask ? '••••••' : safeLine(queued)}\n`);
      return queued;
    }
    if (this.ended) throw new Closed('input closed');
    if (this.tty) this.close();
    const rl = this.open(mask);
    const muted = mask && this.terminal;
    try {
      return await new Promise<string>((resolve, reject) => {
        const onAbort = () => {
          this.waiter = undefined;
          reject(new RequestAborted(signal.reason));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        this.waiter = {
          resolve: (l) => {
            signal.removeEventListener('abort', onAbort);
            resolve(l);
          },
          reject: (e) => {
            signal.removeEventListener('abort', onAbort);
            reject(e);
          },
        };
        if (muted) this.output.write(prompt);
        rl.setPrompt(muted ? '' : prompt);
        rl.prompt();
      });
    } finally {
      if (muted) this.output.write('\n');
      // On a TTY, give the terminal back between questions: cooked mode, so Ctrl-C works while we wait on the server.
      if (this.tty) this.close();
    }
  }

  close(): void {
    const rl = this.rl;
    this.rl = undefined;
    rl?.close();
  }
}

type Answer = { type: 'value'; value: FieldValue | undefined } | { type: 'decline' } | { type: 'cancel' };

const PERSON_WHY: Record<string, string> = {
  consent: 'your consent is needed',
  second_factor: 'a second factor is needed',
  approval: 'your approval is needed',
  unspecified: 'only a person may answer this',
};

export interface TerminalResolver extends InputResolver {
  close(): void;
}

/** Who asks: the name the server gives itself, and the endpoint it really is (a name is only a claim). */
function asker(ctx: ResolveContext): SafeText {
  const name = safeLine(ctx.server);
  const endpoint = ctx.endpoint === undefined ? undefined : safeLine(ctx.endpoint);
  return endpoint === undefined || endpoint === name ? name : safe`${name} (${endpoint})`;
}

/** Asks a person in a terminal. Handles form and URL elicitation; a person may answer anything. */
export function terminalResolver(options: TerminalResolverOptions = {}): TerminalResolver {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stderr;
  const color = options.color ?? (output.isTTY === true && !process.env.NO_COLOR);
  const s = style(color);
  const review = options.review ?? true;
  const reader = new LineReader(input, output, options.onInterrupt);
  const turn = oneAtATime();
  const bar = s.dim(safe`│`);
  // The only way this resolver prints: whole lines of SafeText.
  const write = (line: SafeText) => output.write(`${line}\n`);
  const ask = (prompt: SafeText, ctx: ResolveContext, mask = false) => reader.ask(prompt, ctx.signal, mask);

  const header = (q: InputQuestion, ctx: ResolveContext, extra?: SafeText) => {
    // The input key is what `--answers` and agent rules match: name it, so nobody has to guess it.
    const key = s.dim(safe` · key ${safeLine(JSON.stringify(q.key))}`);
    write(safe`${s.dim(safe`╭─`)} ${s.bold(asker(ctx))} asks${extra ? safe` · ${extra}` : safe``}${key}`);
    if (q.message) for (const l of safeLines(q.message)) write(safe`${bar}  ${s.bold(l)}`);
    // A four-eyes approval arrives as a link to the requester's status page: someone else decides, so "your approval
    // is needed" would tell the requester to approve their own request.
    const why =
      q.personRequired === 'approval' && q.kind === 'elicitation.url'
        ? 'a reviewer must approve this — only you may follow it, not an agent'
        : `${PERSON_WHY[q.personRequired ?? 'unspecified'] ?? PERSON_WHY.unspecified} — answer it yourself`;
    if (q.personRequired && q.personRequired !== 'url')
      write(safe`${bar}  ${s.yellow(safeLine(`⚠ ${why}`))}`);
  };

  const fieldLine = (f: FormField, current: FieldValue | undefined): SafeText => {
    const parts: string[] = [];
    switch (f.type) {
      case 'choice':
        parts.push(`choose 1-${f.options.length}`);
        break;
      case 'multi': {
        const n =
          f.minItems !== undefined || f.maxItems !== undefined
            ? ` (${f.minItems ?? 0}-${f.maxItems ?? f.options.length})`
            : '';
        parts.push(`choose one or more, comma-separated${n}`);
        break;
      }
      case 'boolean':
        parts.push(current === true ? 'Y/n' : current === false ? 'y/N' : 'y/n');
        break;
      case 'number':
      case 'integer': {
        const kind = f.type === 'integer' ? 'whole number' : 'number';
        const bounds: string[] = [];
        if (f.minimum !== undefined) bounds.push(`≥ ${f.minimum}`);
        if (f.exclusiveMinimum !== undefined) bounds.push(`> ${f.exclusiveMinimum}`);
        if (f.maximum !== undefined) bounds.push(`≤ ${f.maximum}`);
        if (f.exclusiveMaximum !== undefined) bounds.push(`< ${f.exclusiveMaximum}`);
        parts.push([kind, ...bounds].join(' '));
        break;
      }
      case 'string':
        if (f.format) parts.push(f.format);
        break;
      case 'json':
        parts.push('JSON');
        break;
    }
    if (!f.required) parts.push('optional');
    if (current !== undefined && f.type !== 'boolean')
      parts.push(f.secret ? 'default hidden' : `default ${showValue(f, current)}`);
    const about = parts.length ? s.dim(safeLine(` (${parts.join(', ')})`)) : safe``;
    return safe`${bar}  ${s.bold(safeLine(f.label))}${about} ${s.cyan(safe`›`)} `;
  };

  const askField = async (
    f: FormField,
    current: FieldValue | undefined,
    ctx: ResolveContext,
  ): Promise<Answer> => {
    if (f.description) write(safe`${bar}  ${s.dim(safeLine(f.description))}`);
    if (f.type === 'choice' || f.type === 'multi') {
      const items = f.options.map((o, i) => safe`${s.cyan(safe`${i + 1})`)} ${safeLine(o.label)}`);
      const inline = f.options.reduce((n, o) => n + o.label.length + 5, 0) <= 72;
      if (inline) write(safe`${bar}    ${joinSafe(items, '   ')}`);
      else for (const item of items) write(safe`${bar}    ${item}`);
    }
    const withDefault = { ...f, default: current } as FormField;
    for (;;) {
      const line = await ask(fieldLine(f, current), ctx, f.secret !== undefined);
      const cmd = line.trim().toLowerCase();
      if (cmd === '/decline') return { type: 'decline' };
      if (cmd === '/cancel') return { type: 'cancel' };
      const parsed = parseTyped(withDefault, line);
      if (parsed.ok) return { type: 'value', value: parsed.value };
      write(safe`${bar}  ${s.red(safeLine(`✗ ${parsed.message}`))}`);
    }
  };

  const finish = (result: ElicitResult): ElicitResult => {
    const how =
      result.action === 'accept'
        ? s.green(safe`sent`)
        : result.action === 'decline'
          ? s.yellow(safe`declined`)
          : s.yellow(safe`cancelled`);
    write(safe`${s.dim(safe`╰─`)} ${how}`);
    return result;
  };

  /** A form asking for secrets: say so, and let the person refuse (the default) before anything is typed. */
  const secretsAllowed = async (fields: FormField[], ctx: ResolveContext): Promise<Answer['type']> => {
    const secret = fields.filter((f) => f.secret !== undefined);
    if (secret.length === 0) return 'value';
    const what = [...new Set(secret.map((f) => f.secret))].join(' and ');
    const named = secret.map((f) => f.label).join(', ');
    write(safe`${bar}  ${s.yellow(safeLine(`⚠ this form asks for ${what} (${named}).`))}`);
    write(
      safe`${bar}  ${s.yellow(safe`  MCP forbids servers to ask for passwords, keys or codes in a form: a genuine service sends you to its own page.`)}`,
    );
    for (;;) {
      const line = await ask(safe`${bar}  Answer it anyway? ${s.dim(safe`[y/N]`)} ${s.cyan(safe`›`)} `, ctx);
      const c = line.trim().toLowerCase();
      if (c === 'y' || c === 'yes') return 'value';
      if (c === '' || c === 'n' || c === 'no' || c === 'd' || c === '/decline') return 'decline';
      if (c === 'c' || c === '/cancel') return 'cancel';
      write(safe`${bar}  ${s.red(safe`✗ answer y or n`)}`);
    }
  };

  const askForm = async (q: InputQuestion, ctx: ResolveContext): Promise<ElicitResult> => {
    const schema = (q.request.params as JsonObject).requestedSchema as JsonObject;
    const fields = readForm(schema);
    header(q, ctx);
    const go = await secretsAllowed(fields, ctx);
    if (go !== 'value') return finish({ action: go });
    write(safe`${bar}  ${s.dim(safe`type /decline or /cancel at any prompt`)}`);
    // Keyed by the server's field names, which may be `__proto__` or `constructor`.
    const values = emptyRecord<FieldValue | undefined>();
    for (const f of fields) values[f.name] = f.default;
    for (;;) {
      for (const f of fields) {
        const a = await askField(f, values[f.name], ctx);
        if (a.type === 'decline') return finish({ action: 'decline' });
        if (a.type === 'cancel') return finish({ action: 'cancel' });
        values[f.name] = a.value;
      }
      const content = emptyRecord<string | number | boolean | string[]>();
      for (const f of fields) {
        const v = values[f.name];
        if (v !== undefined) content[f.name] = v;
      }
      // A lone yes/no is its own confirmation; anything more gets a review before it is sent.
      const confirmation = fields.length === 1 && fields[0]?.type === 'boolean';
      if (!review || confirmation) return finish({ action: 'accept', content });
      // The review shows what will be sent: a choice's value next to a title that does not read as it, and never
      // a secret typed a moment ago.
      const summary = joinSafe(
        fields
          .filter((f) => content[f.name] !== undefined)
          .map((f) => {
            const shown = f.secret ? '••••••' : showSent(f, content[f.name] as FieldValue);
            return safe`${safeLine(f.label)} = ${s.bold(safeLine(shown))}`;
          }),
        ', ',
      );
      for (;;) {
        const line = await ask(
          safe`${bar}  Send ${summary || safe`an empty answer`}? ${s.dim(safe`[Y]es/[e]dit/[d]ecline/[c]ancel`)} ${s.cyan(safe`›`)} `,
          ctx,
        );
        const c = line.trim().toLowerCase();
        if (c === '' || c === 'y' || c === 'yes') return finish({ action: 'accept', content });
        if (c === 'd' || c === 'decline' || c === '/decline') return finish({ action: 'decline' });
        if (c === 'c' || c === 'cancel' || c === '/cancel') return finish({ action: 'cancel' });
        if (c === 'e' || c === 'edit' || c === 'n' || c === 'no') break;
        write(safe`${bar}  ${s.red(safe`✗ answer y, e, d or c`)}`);
      }
    }
  };

  // An approval asked again with the same link is still pending: wait and check again instead of asking.
  let pendingApproval: { url: string; polls: number } | undefined;
  const pollApproval = async (q: InputQuestion, ctx: ResolveContext): Promise<ElicitResult> => {
    const waiting = pendingApproval!;
    const delay = Math.min(MAX_POLL_MS, (options.pollMs ?? 5000) * 2 ** waiting.polls);
    const frame = SPINNER[waiting.polls % SPINNER.length]!;
    waiting.polls++;
    // "Still waiting — approved by k of n": the server's first sentence is the status.
    const status = (q.message ?? 'Still waiting').split(/\.\s/)[0]!;
    write(
      safe`${bar}  ${s.cyan(safeLine(frame))} ${safeLine(status)} ${s.dim(safeLine(`· checking again in ${Math.round(delay / 1000)} s (Ctrl-C stops)`))}`,
    );
    await wait(delay, ctx.signal);
    return { action: 'accept' };
  };

  const askUrl = async (q: InputQuestion, ctx: ResolveContext): Promise<ElicitResult> => {
    const params = (q.request as ElicitUrlRequest).params;
    if (q.personRequired === 'approval' && pendingApproval?.url === params.url) return pollApproval(q, ctx);
    pendingApproval = undefined;
    header(q, ctx, safe`a link to open`);
    const link = inspectLink(params.url);
    if (!link.ok) {
      // Never shown as something to open: declined for the person, who is told why.
      write(safe`${bar}  ${s.red(safeLine(`✗ refused: ${link.reason}`))}`);
      return finish({ action: 'decline' });
    }
    write(safe`${bar}  opens ${s.bold(s.cyan(safeLine(link.host)))}`);
    write(safe`${bar}  ${safeLine(link.href)}`);
    for (const w of link.warnings) write(safe`${bar}  ${s.yellow(safeLine(`⚠ ${w}`))}`);
    const open = options.openUrl;
    write(
      safe`${bar}  ${s.dim(
        open
          ? safe`Nothing is opened unless you say so: [o] opens it in your browser, if you trust it.`
          : safe`Nothing is opened for you: open the link in your browser if you trust it.`,
      )}`,
    );
    const approval = q.personRequired === 'approval';
    const choices = approval
      ? safe`${open ? safe`[o]pen/` : safe``}[Enter] wait here for the decision/[d]ecline/[c]ancel`
      : safe`${open ? safe`[o]pen/` : safe``}[Enter] done/[d]ecline/[c]ancel`;
    for (;;) {
      const line = await ask(
        safe`${bar}  ${approval ? safe`Wait for it?` : safe`Done there?`} ${s.dim(choices)} ${s.cyan(safe`›`)} `,
        ctx,
      );
      const c = line.trim().toLowerCase();
      if (open && (c === 'o' || c === 'open')) {
        open(link.href);
        write(safe`${bar}  ${s.dim(safeLine(`opening ${link.host} in your browser…`))}`);
        continue;
      }
      if (c === '' || c === 'y' || c === 'yes' || c === 'done') {
        if (approval) pendingApproval = { url: params.url, polls: 0 };
        return finish({ action: 'accept' });
      }
      if (c === 'd' || c === 'decline' || c === '/decline') return finish({ action: 'decline' });
      if (c === 'c' || c === 'cancel' || c === '/cancel') return finish({ action: 'cancel' });
      write(safe`${bar}  ${s.red(safe`✗ press Enter when done, or d or c`)}`);
    }
  };

  return {
    name: 'terminal',
    kinds: ['elicitation.form', 'elicitation.url'],
    person: true,
    accepts: (q) => q.kind === 'elicitation.form' || q.kind === 'elicitation.url',
    // One question on screen at a time, whoever asks (concurrent server requests, concurrent calls): two open
    // prompts on one terminal would share its keystrokes. A question still waiting its turn is never drawn.
    resolve: (q, ctx) =>
      turn(ctx.signal, async () => {
        try {
          return q.kind === 'elicitation.url' ? await askUrl(q, ctx) : await askForm(q, ctx);
        } catch (error) {
          if (error instanceof Closed) {
            write(safe``);
            // The person closed the input (Ctrl-D): they walked away from the call.
            throw new RequestAborted(new RequestAborted(undefined, 'input closed'));
          }
          if (error instanceof RequestAborted) write(safe``);
          throw error;
        }
      }),
    close: () => reader.close(),
  };
}
