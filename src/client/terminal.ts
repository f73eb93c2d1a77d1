// A resolver that asks a person in a terminal: form fields as prompts with validation and re-asks, a review step,
// decline and cancel at any prompt, and URL mode shown as a link the person opens themselves.
import { createInterface, type Interface } from 'node:readline';
import { type ElicitResult, type ElicitUrlRequest, emptyRecord, type JsonObject } from '../protocol/index.js';
import { RequestAborted } from './errors.js';
import { type FieldValue, type FormField, parseTyped, readForm, showValue } from './form.js';
import type { InputQuestion } from './input.js';
import type { InputResolver, ResolveContext } from './resolvers.js';

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
}

class Closed extends Error {}

interface Style {
  bold: (s: string) => string;
  dim: (s: string) => string;
  red: (s: string) => string;
  green: (s: string) => string;
  yellow: (s: string) => string;
  cyan: (s: string) => string;
}

function style(color: boolean): Style {
  const wrap = (open: number, close: number) => (s: string) =>
    color ? `\x1b[${open}m${s}\x1b[${close}m` : s;
  return {
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
  };
}

/** Strip control characters from server-provided text so it cannot move the cursor or recolour the screen. */
export function safeText(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x1b) {
      // Drop a whole CSI sequence (ESC [ … final byte), not just the ESC.
      if (text[i + 1] === '[') {
        i += 2;
        while (i < text.length && !(text.charCodeAt(i) >= 0x40 && text.charCodeAt(i) <= 0x7e)) i++;
      }
      continue;
    }
    if (c === 10 || c === 9 || (c >= 0x20 && c < 0x7f) || c > 0x9f) out += text[i];
  }
  return out;
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

  private open(): Interface {
    if (this.rl) return this.rl;
    const rl = createInterface({
      input: this.input,
      output: this.output,
      terminal: this.tty && this.output.isTTY === true,
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
      w?.reject(new RequestAborted(new Error('interrupted')));
      this.onInterrupt?.();
    });
    this.rl = rl;
    return rl;
  }

  async ask(prompt: string, signal: AbortSignal): Promise<string> {
    if (signal.aborted) throw new RequestAborted(signal.reason);
    const queued = this.queue.shift();
    if (queued !== undefined) {
      this.output.write(`${prompt}${queued}\n`);
      return queued;
    }
    if (this.ended) throw new Closed('input closed');
    const rl = this.open();
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
        rl.setPrompt(prompt);
        rl.prompt();
      });
    } finally {
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

/** Highlight the host so a look-alike subdomain stands out, and say what looks wrong. */
function describeLink(raw: string, s: Style): { line: string; warnings: string[] } {
  const warnings: string[] = [];
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { line: safeText(raw), warnings: ['this is not a valid URL'] };
  }
  const host = url.host;
  const at = raw.indexOf(host);
  const line =
    at >= 0
      ? `${safeText(raw.slice(0, at))}${s.bold(s.cyan(host))}${safeText(raw.slice(at + host.length))}`
      : safeText(raw);
  if (/(^|\.)xn--/i.test(url.hostname) || /[^\x20-\x7e]/.test(raw))
    warnings.push('the address uses international characters (punycode): check the domain carefully');
  if (url.protocol !== 'https:' && !['localhost', '127.0.0.1', '[::1]'].includes(url.hostname))
    warnings.push(`the link is not https (${url.protocol.replace(':', '')})`);
  if (url.username || url.password) warnings.push('the link carries a user name or password');
  return { line: at >= 0 ? line : safeText(raw), warnings };
}

export interface TerminalResolver extends InputResolver {
  close(): void;
}

/** Asks a person in a terminal. Handles form and URL elicitation; a person may answer anything. */
export function terminalResolver(options: TerminalResolverOptions = {}): TerminalResolver {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stderr;
  const color = options.color ?? (output.isTTY === true && !process.env.NO_COLOR);
  const s = style(color);
  const review = options.review ?? true;
  const reader = new LineReader(input, output, options.onInterrupt);
  const bar = s.dim('│');
  const write = (line: string) => output.write(`${line}\n`);

  const header = (q: InputQuestion, ctx: ResolveContext, extra?: string) => {
    const who = s.bold(safeText(ctx.server));
    write(`${s.dim('╭─')} ${who} asks${extra ? ` · ${extra}` : ''}`);
    if (q.message) for (const l of safeText(q.message).split('\n')) write(`${bar}  ${s.bold(l)}`);
    if (q.personRequired && q.personRequired !== 'url')
      write(
        `${bar}  ${s.yellow(`⚠ ${PERSON_WHY[q.personRequired] ?? PERSON_WHY.unspecified} — answer it yourself`)}`,
      );
  };

  const fieldLine = (f: FormField, current: FieldValue | undefined): string => {
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
    if (current !== undefined && f.type !== 'boolean') parts.push(`default ${showValue(f, current)}`);
    return `${bar}  ${s.bold(safeText(f.label))}${parts.length ? s.dim(` (${parts.join(', ')})`) : ''} ${s.cyan('›')} `;
  };

  const askField = async (
    f: FormField,
    current: FieldValue | undefined,
    ctx: ResolveContext,
  ): Promise<Answer> => {
    if (f.description) write(`${bar}  ${s.dim(safeText(f.description))}`);
    if (f.type === 'choice' || f.type === 'multi') {
      const items = f.options.map((o, i) => `${s.cyan(`${i + 1})`)} ${safeText(o.label)}`);
      const inline = f.options.reduce((n, o) => n + o.label.length + 5, 0) <= 72;
      if (inline) write(`${bar}    ${items.join('   ')}`);
      else for (const item of items) write(`${bar}    ${item}`);
    }
    const withDefault = { ...f, default: current } as FormField;
    for (;;) {
      const line = await reader.ask(fieldLine(f, current), ctx.signal);
      const cmd = line.trim().toLowerCase();
      if (cmd === '/decline') return { type: 'decline' };
      if (cmd === '/cancel') return { type: 'cancel' };
      const parsed = parseTyped(withDefault, line);
      if (parsed.ok) return { type: 'value', value: parsed.value };
      write(`${bar}  ${s.red(`✗ ${parsed.message}`)}`);
    }
  };

  const finish = (result: ElicitResult): ElicitResult => {
    const how =
      result.action === 'accept'
        ? s.green('sent')
        : result.action === 'decline'
          ? s.yellow('declined')
          : s.yellow('cancelled');
    write(`${s.dim('╰─')} ${how}`);
    return result;
  };

  const askForm = async (q: InputQuestion, ctx: ResolveContext): Promise<ElicitResult> => {
    const schema = (q.request.params as JsonObject).requestedSchema as JsonObject;
    const fields = readForm(schema);
    header(q, ctx);
    write(`${bar}  ${s.dim('type /decline or /cancel at any prompt')}`);
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
      const summary = fields
        .filter((f) => content[f.name] !== undefined)
        .map((f) => `${safeText(f.label)} = ${s.bold(safeText(showValue(f, content[f.name] as FieldValue)))}`)
        .join(', ');
      for (;;) {
        const line = await reader.ask(
          `${bar}  Send ${summary || 'an empty answer'}? ${s.dim('[Y]es/[e]dit/[d]ecline/[c]ancel')} ${s.cyan('›')} `,
          ctx.signal,
        );
        const c = line.trim().toLowerCase();
        if (c === '' || c === 'y' || c === 'yes') return finish({ action: 'accept', content });
        if (c === 'd' || c === 'decline' || c === '/decline') return finish({ action: 'decline' });
        if (c === 'c' || c === 'cancel' || c === '/cancel') return finish({ action: 'cancel' });
        if (c === 'e' || c === 'edit' || c === 'n' || c === 'no') break;
        write(`${bar}  ${s.red('✗ answer y, e, d or c')}`);
      }
    }
  };

  const askUrl = async (q: InputQuestion, ctx: ResolveContext): Promise<ElicitResult> => {
    const params = (q.request as ElicitUrlRequest).params;
    header(q, ctx, 'a link to open');
    const link = describeLink(params.url, s);
    write(`${bar}  ${link.line}`);
    for (const w of link.warnings) write(`${bar}  ${s.yellow(`⚠ ${w}`)}`);
    write(`${bar}  ${s.dim('Nothing is opened for you: open the link in your browser if you trust it.')}`);
    for (;;) {
      const line = await reader.ask(
        `${bar}  Done there? ${s.dim('[Enter] done/[d]ecline/[c]ancel')} ${s.cyan('›')} `,
        ctx.signal,
      );
      const c = line.trim().toLowerCase();
      if (c === '' || c === 'y' || c === 'yes' || c === 'done') return finish({ action: 'accept' });
      if (c === 'd' || c === 'decline' || c === '/decline') return finish({ action: 'decline' });
      if (c === 'c' || c === 'cancel' || c === '/cancel') return finish({ action: 'cancel' });
      write(`${bar}  ${s.red('✗ press Enter when done, or d or c')}`);
    }
  };

  return {
    name: 'terminal',
    kinds: ['elicitation.form', 'elicitation.url'],
    person: true,
    accepts: (q) => q.kind === 'elicitation.form' || q.kind === 'elicitation.url',
    async resolve(q, ctx) {
      try {
        return q.kind === 'elicitation.url' ? await askUrl(q, ctx) : await askForm(q, ctx);
      } catch (error) {
        if (error instanceof Closed) {
          write('');
          // The person closed the input (Ctrl-D): they walked away from the call.
          throw new RequestAborted(new Error('input closed'));
        }
        if (error instanceof RequestAborted) write('');
        throw error;
      }
    },
    close: () => reader.close(),
  };
}
