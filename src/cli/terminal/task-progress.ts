// What `mrtr call` and `mrtr task get` say about a task while they follow it: once, how to resume it from another
// shell; then its status. On a TTY the status is the call's spinner line, redrawn in place (CallUi); otherwise one
// line per change, so a log shows each status once. Server text (the id, its message) goes through safeLine.
import type { MrtrEvent, SafeText, TaskEvent } from '../../client/index.js';
import { joinSafe, safe, safeLine } from '../../client/index.js';
import { selfCommand } from '../self-command.js';
import { printLine } from './print.js';

/** `task <id>: <status> — <statusMessage>`, one line whatever the server put in its message. */
export function taskStatusLine(event: TaskEvent): SafeText {
  const message = event.statusMessage ? safe` — ${safeLine(event.statusMessage)}` : safe``;
  return safe`task ${safeLine(event.taskId)}: ${safeLine(event.status)}${message}`;
}

/** An argument as a person would type it into a POSIX shell again. */
function shellWord(word: string): SafeText {
  // Quoted as shown: what a person copies is the sanitized text, so that is what must survive the shell.
  const shown = safeLine(word);
  return /^[\w@%+=:,./…-]+$/.test(shown) ? shown : safeLine(`'${shown.replaceAll("'", `'\\''`)}'`);
}

/** `mrtr task get|cancel <id> <server…>`, ready to paste into a shell: mrtr as that shell reaches it. */
export function taskLine(
  sub: 'get' | 'cancel',
  taskId: string,
  again: readonly string[],
  self: readonly string[] = selfCommand(),
): SafeText {
  const mrtr = joinSafe(self.map(shellWord), ' ');
  return safe`${mrtr} task ${safeLine(sub)} ${shellWord(taskId)} ${joinSafe(again.map(shellWord), ' ')}`;
}

export interface TaskProgressOptions {
  out: NodeJS.WritableStream;
  /** A TTY: the spinner shows the status, nothing is printed per change. */
  live: boolean;
  /** Print one line of ours (through the call's UI on a TTY, so it never lands inside a prompt). */
  say: (text: SafeText) => void;
  /** The server's arguments for `mrtr task get <id> …`; undefined: no resume hint (already resuming). */
  resume: readonly string[] | undefined;
  /** A line said after the resume line: where the line takes the token from, when the person must set it. */
  resumeNote?: SafeText;
}

export class TaskProgress {
  /** The task followed, once the call became one. */
  taskId: string | undefined;
  constructor(private readonly o: TaskProgressOptions) {}

  /** Whether the call became a task (a failure afterwards is the task's, not an unknown id's). */
  get sawTask(): boolean {
    return this.taskId !== undefined;
  }

  onEvent(event: MrtrEvent): void {
    if (event.type !== 'task') return;
    if (this.taskId === undefined) {
      this.taskId = event.taskId;
      if (this.o.resume) {
        const command = taskLine('get', event.taskId, this.o.resume);
        // The command ends its line, so the line's tail runs pasted whole; what to know about it goes below.
        this.o.say(safe`task ${safeLine(event.taskId)} — resume with: ${command}`);
        // A stdio server started again is a new process: it finds the task only in a store that outlived the old one.
        if (this.o.resume.includes('--stdio'))
          this.o.say(safe`  a stdio server finds it again only if it keeps tasks in a file or Redis store`);
        if (this.o.resumeNote) this.o.say(this.o.resumeNote);
      }
    }
    // The driver reports a task only when its status or message changed: each is a new line in a log.
    if (!this.o.live) printLine(this.o.out, taskStatusLine(event));
  }
}
