// What `mrtr call` shows on stderr while a call runs: a spinner while waiting, one compact line per round.
import type { MrtrEvent } from '../../client/index.js';
import { safeText } from '../../client/index.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface CallUiOptions {
  out: NodeJS.WritableStream & { isTTY?: boolean };
  /** Draw the spinner and round lines (a TTY). Otherwise the UI stays silent. */
  live: boolean;
  color: boolean;
  server: () => string;
}

export class CallUi {
  private frame = 0;
  private timer: NodeJS.Timeout | undefined;
  private label = '';
  private readonly asked = new Map<number, string[]>();
  private readonly o: CallUiOptions;

  constructor(options: CallUiOptions) {
    this.o = options;
  }

  private paint = (s: string, code: number) => (this.o.color ? `\x1b[${code}m${s}\x1b[0m` : s);
  dim = (s: string) => this.paint(s, 2);
  green = (s: string) => this.paint(s, 32);
  red = (s: string) => this.paint(s, 31);
  yellow = (s: string) => this.paint(s, 33);

  private spin(label: string): void {
    if (!this.o.live) return;
    this.label = label;
    if (this.timer) return;
    const draw = () => {
      this.frame = (this.frame + 1) % FRAMES.length;
      this.o.out.write(`\r\x1b[K${this.paint(FRAMES[this.frame] ?? '', 36)} ${this.dim(this.label)}`);
    };
    draw();
    this.timer = setInterval(draw, 80);
  }

  stop(): void {
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
      this.o.out.write('\r\x1b[K');
    }
  }

  line(text: string): void {
    if (!this.o.live) return;
    this.stop();
    this.o.out.write(`${text}\n`);
  }

  onEvent = (event: MrtrEvent): void => {
    switch (event.type) {
      case 'round':
        this.spin(`round ${event.round} · waiting for ${safeText(this.o.server())}…`);
        return;
      case 'input_needed': {
        const keys = this.asked.get(event.round) ?? [];
        if (keys.length === 0) this.stop();
        keys.push(safeText(event.key));
        this.asked.set(event.round, keys);
        return;
      }
      case 'answered':
        return;
      case 'retrying':
        if (event.reason === 'state_only')
          this.line(
            this.dim(`  round ${event.round - 1} · server still working · retrying in ${event.delayMs} ms`),
          );
        else
          this.line(
            this.dim(
              `  round ${event.round - 1} · answered ${(this.asked.get(event.round - 1) ?? []).join(', ')}`,
            ),
          );
        return;
      case 'notification': {
        const n = event.notification;
        const p = (n.params ?? {}) as Record<string, unknown>;
        if (n.method === 'notifications/progress') {
          const total = typeof p.total === 'number' ? `/${p.total}` : '';
          const msg = typeof p.message === 'string' ? ` ${safeText(p.message)}` : '';
          this.spin(`round ${event.round} · ${safeText(String(p.progress))}${total}${msg}`);
        } else if (n.method === 'notifications/message') {
          // Everything here comes from the server: strip control sequences before it reaches the terminal.
          const data = typeof p.data === 'string' ? p.data : JSON.stringify(p.data);
          this.line(this.dim(`  [${safeText(String(p.level))}] ${safeText(data ?? '')}`));
        }
        return;
      }
      case 'done':
        this.stop();
        return;
    }
  };
}
