// What `mrtr call` draws from server-provided text: control sequences never reach the terminal.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { printJson } from '../../src/cli/terminal/print.js';
import { CallUi } from '../../src/cli/terminal/ui.js';
import { safeLine } from '../../src/client/index.js';

describe('the call UI', () => {
  it('strips escape sequences from server log messages, progress, keys and names', () => {
    const out = new PassThrough();
    let written = '';
    out.on('data', (c: Buffer) => {
      written += c.toString();
    });
    const ui = new CallUi({ out, live: true, color: false, server: () => safeLine('evil\x1b[2Jserver') });
    ui.onEvent({ type: 'round', round: 1 } as never);
    ui.onEvent({
      type: 'notification',
      round: 1,
      notification: {
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: { level: 'info\x1b[1A', data: 'hi\x1b[2J\x1b]52;c;cGF5bG9hZA==\x07there' },
      },
    } as never);
    ui.onEvent({
      type: 'input_needed',
      round: 1,
      key: 'k\x1b[31m',
      kind: 'elicitation.form',
      message: 'm',
    } as never);
    ui.onEvent({ type: 'answered', round: 1, key: 'k\x1b[31m', by: 'x', action: 'accept' } as never);
    ui.onEvent({ type: 'retrying', round: 2, reason: 'answered', delayMs: 0 } as never);
    ui.onEvent({ type: 'done' } as never);
    // The UI's own cursor handling is allowed (\r\x1b[K); nothing the server sent may start a sequence.
    const foreign = written.replaceAll('\r\x1b[K', '');
    expect(foreign).not.toContain('\x1b');
    expect(foreign).toContain('[info] hi');
    expect(foreign).toContain('answered k');
  });

  it('says cancelled for a cancel and declined for a decline, per round of questions', () => {
    const out = new PassThrough();
    let written = '';
    out.on('data', (c: Buffer) => {
      written += c.toString();
    });
    const ui = new CallUi({ out, live: true, color: false, server: () => safeLine('s') });
    ui.onEvent({ type: 'answered', round: 1, key: 'a', by: 'x', action: 'cancel' } as never);
    ui.onEvent({ type: 'answered', round: 1, key: 'b', by: 'x', action: 'decline' } as never);
    ui.onEvent({ type: 'retrying', round: 2, reason: 'answered', delayMs: 0 } as never);
    expect(written).toContain('round 1 · cancelled a, declined b');
    expect(ui.rounds).toBe(1);
  });

  it('--json on a terminal escapes C1, bidi and zero-width characters and stays the same JSON', () => {
    let written = '';
    const tty = {
      isTTY: true,
      write: (t: string) => {
        written += t;
        return true;
      },
    } as unknown as NodeJS.WriteStream;
    const value = { text: 'a\u009b2J\u202eb\u200bc\u2028d' };
    printJson(tty, JSON.stringify(value));
    expect(written).not.toMatch(/[\u009b\u202e\u200b\u2028]/);
    expect(JSON.parse(written)).toEqual(value);
  });

  it('answers given within one request (a legacy server) get their round line when the call ends', () => {
    const out = new PassThrough();
    let written = '';
    out.on('data', (c: Buffer) => {
      written += c.toString();
    });
    const ui = new CallUi({ out, live: true, color: false, server: () => safeLine('s') });
    ui.onEvent({ type: 'round', round: 1 } as never);
    ui.onEvent({ type: 'answered', round: 1, key: 'q1', by: 'x', action: 'accept' } as never);
    ui.onEvent({ type: 'done', status: 'complete', rounds: 1 } as never);
    expect(written).toContain('round 1 · answered q1');
    expect(ui.rounds).toBe(1);
  });

  it('draws nothing while a question is open: log lines wait for the answer, progress does not start the spinner', () => {
    const out = new PassThrough();
    let written = '';
    out.on('data', (c: Buffer) => {
      written += c.toString();
    });
    const ui = new CallUi({ out, live: true, color: false, server: () => safeLine('s') });
    ui.onEvent({ type: 'round', round: 1, method: 'tools/call', target: 't' });
    ui.onEvent({
      type: 'input_needed',
      round: 1,
      key: 'q1',
      kind: 'elicitation.form',
      message: 'm',
      why: undefined,
    });
    const asked = written;
    const log = {
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: 'info', data: 'meanwhile' },
    };
    const progress = {
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progress: 1, message: 'busy' },
    };
    ui.onEvent({ type: 'notification', round: 1, notification: log } as never);
    ui.onEvent({ type: 'notification', round: 1, notification: progress } as never);
    // The question's prompt is the last thing on screen until it is answered.
    expect(written).toBe(asked);
    ui.onEvent({ type: 'answered', round: 1, key: 'q1', by: 'terminal', action: 'accept' });
    expect(written.slice(asked.length)).toContain('[info] meanwhile');
    ui.onEvent({ type: 'done', status: 'complete', rounds: 1 });
  });
});
