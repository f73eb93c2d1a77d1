// A real pseudo-terminal for the interactive CLI tests: tmux runs the command, the test types keys and reads the
// screen, waking on each output of the pane (never on a timer).
import { execFileSync, spawnSync } from 'node:child_process';
import { type FSWatcher, mkdtempSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFailed, onTestFinished } from 'vitest';
import { deferred } from '../helpers/signals.js';

export function haveTmux(): boolean {
  return spawnSync('tmux', ['-V']).status === 0;
}

export class Tmux {
  private readonly socket = `mrtr-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  /** tmux copies everything the pane prints to this file; a write to it means the screen changed. */
  private readonly dir = mkdtempSync(join(tmpdir(), 'mrtr-tmux-'));
  private readonly watcher: FSWatcher;
  private changed = deferred();
  private last = { pattern: '', screen: '' };

  constructor(command: string) {
    const log = join(this.dir, 'pane.log');
    writeFileSync(log, '');
    this.watcher = watch(log, () => {
      const done = this.changed;
      this.changed = deferred();
      done.resolve();
    });
    execFileSync('tmux', [
      '-L',
      this.socket,
      'new-session',
      '-d',
      '-s',
      'call',
      '-x',
      '110',
      '-y',
      '45',
      command,
    ]);
    execFileSync('tmux', ['-L', this.socket, 'pipe-pane', '-t', 'call', `cat >> '${log}'`]);
    // A screen that never shows what a test waits for ends in the test timeout: say what was on it.
    onTestFailed(() => {
      console.error(`waiting for ${this.last.pattern}; the screen showed:\n${this.last.screen}`);
    });
    onTestFinished(() => this.kill());
  }
  screen(): string {
    return execFileSync('tmux', [
      '-L',
      this.socket,
      'capture-pane',
      '-p',
      '-t',
      'call',
      '-S',
      '-200',
    ]).toString();
  }
  type(...keys: string[]): void {
    execFileSync('tmux', ['-L', this.socket, 'send-keys', '-t', 'call', ...keys]);
  }
  /** The screen once it shows `pattern`: checked now and after each output of the pane, never on a timer. */
  async waitFor(pattern: RegExp | string): Promise<string> {
    for (;;) {
      // Taken before the capture: tmux updates the screen before it copies the output, so none is missed.
      const changed = this.changed.promise;
      const s = this.screen();
      this.last = { pattern: String(pattern), screen: s };
      if (typeof pattern === 'string' ? s.includes(pattern) : pattern.test(s)) return s;
      await changed;
    }
  }
  kill(): void {
    this.watcher.close();
    spawnSync('tmux', ['-L', this.socket, 'kill-server']);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
