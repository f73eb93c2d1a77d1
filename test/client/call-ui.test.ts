// What `mrtr call` draws from server-provided text: control sequences never reach the terminal.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
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
});
