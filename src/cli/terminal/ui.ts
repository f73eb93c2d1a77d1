// What `mrtr call` shows on stderr while a call runs: a spinner while waiting, one compact line per round of
// questions. Every piece of server text goes through the client's sanitizer (SafeText) before it is drawn.
import type { MrtrEvent, SafeText } from '../../client/index.js';
import { joinSafe, safe, safeLine } from '../../client/index.js';
import { paint, printLine, writeSafe } from './print.js';
import { taskStatusLine } from './task-progress.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface CallUiOptions {
  out: NodeJS.WritableStream & { isTTY?: boolean };
  /** Draw the spinner and round lines (a TTY). Otherwise the UI stays silent. */
  live: boolean;
  color: boolean;
  /** Who is asked, as people should see it (already sanitized). */
  server: () => SafeText;
}

type Paint = (s: SafeText) => SafeText;

export class CallUi {
  private frame = 0;
  private timer: NodeJS.Timeout | undefined;
  private label = safe``;
  /** Answers given per request, for the line drawn when the call goes on. */
  private readonly answered = new Map<number, SafeText[]>();
  /** Rounds of questions answered so far: what a person counts as "rounds". */
  private questionRounds = 0;
  /** The followed task's status line while it runs: what the spinner shows instead of "waiting for…". */
  private task: SafeText | undefined;
  /** Questions asked and not yet answered: while one may be on screen, nothing is drawn over or under its prompt. */
  private open = 0;
  /** Lines that arrived while a question was open, printed once it is answered. */
  private held: SafeText[] = [];
  private readonly o: CallUiOptions;

  constructor(options: CallUiOptions) {
    this.o = options;
  }

  private paint =
    (code: number): Paint =>
    (s) =>
      paint(this.o.color, code, s);
  dim = this.paint(2);
  green = this.paint(32);
  red = this.paint(31);
  yellow = this.paint(33);
  private cyan = this.paint(36);

  /** How many rounds of questions were answered (each one sent the call again). */
  get rounds(): number {
    return this.questionRounds;
  }

  private spin(label: SafeText): void {
    if (!this.o.live) return;
    this.label = label;
    if (this.timer || this.open > 0) return;
    const draw = () => {
      this.frame = (this.frame + 1) % FRAMES.length;
      writeSafe(this.o.out, safe`\r\x1b[K${this.cyan(safeLine(FRAMES[this.frame]))} ${this.dim(this.label)}`);
    };
    draw();
    this.timer = setInterval(draw, 80);
  }

  stop(): void {
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
      writeSafe(this.o.out, safe`\r\x1b[K`);
    }
  }

  line(text: SafeText): void {
    if (!this.o.live) return;
    if (this.open > 0) {
      this.held.push(text);
      return;
    }
    this.stop();
    printLine(this.o.out, text);
  }

  /** No question is open any more: print what waited for it. */
  private settle(): void {
    this.open = 0;
    const held = this.held;
    this.held = [];
    for (const text of held) this.line(text);
  }

  onEvent = (event: MrtrEvent): void => {
    switch (event.type) {
      case 'round':
        this.spin(this.task ?? safe`waiting for ${this.o.server()}…`);
        return;
      case 'task':
        if (event.status === 'completed' || event.status === 'failed' || event.status === 'cancelled') {
          this.task = undefined;
          this.stop();
          return;
        }
        this.task = taskStatusLine(event);
        this.spin(this.task);
        return;
      case 'input_needed':
        this.stop();
        this.open++;
        return;
      case 'answered': {
        if (--this.open <= 0) this.settle();
        const list = this.answered.get(event.round) ?? [];
        const how =
          event.action === 'cancel' ? 'cancelled' : event.action === 'decline' ? 'declined' : 'answered';
        list.push(safe`${safeLine(how)} ${safeLine(event.key)}`);
        this.answered.set(event.round, list);
        return;
      }
      case 'retrying':
        this.settle();
        if (event.reason === 'state_only')
          this.line(this.dim(safe`  server still working · asking again in ${event.delayMs} ms`));
        else this.flush(event.round - 1);
        return;
      case 'notification': {
        const n = event.notification;
        const p = (n.params ?? {}) as Record<string, unknown>;
        if (n.method === 'notifications/progress') {
          const total = typeof p.total === 'number' ? safe`/${p.total}` : safe``;
          const msg = typeof p.message === 'string' ? safe` ${safeLine(p.message)}` : safe``;
          this.spin(safe`${safeLine(String(p.progress))}${total}${msg}`);
        } else if (n.method === 'notifications/message') {
          const data = typeof p.data === 'string' ? p.data : JSON.stringify(p.data);
          this.line(this.dim(safe`  [${safeLine(String(p.level))}] ${safeLine(data ?? '')}`));
        }
        return;
      }
      case 'done':
        this.settle();
        // A legacy server asks within one request: its answers get their round line when the call ends.
        for (const round of [...this.answered.keys()]) this.flush(round);
        this.stop();
        return;
    }
  };

  /** One line for a round of questions once it is answered. */
  private flush(round: number): void {
    const answers = this.answered.get(round);
    if (!answers) return;
    this.answered.delete(round);
    this.questionRounds++;
    this.line(this.dim(safe`  round ${this.questionRounds} · ${joinSafe(answers, ', ')}`));
  }
}
