// The terminal resolver in a real pseudo-terminal (tmux) against a server that asks for a password: the warning,
// the refusal by default, and — when the person goes on — nothing of the secret on the screen.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI, type FakeServer, json, requireBuiltCli, result, toolCallServer } from './helpers.js';
import { haveTmux, Tmux } from './tmux.js';

let server: FakeServer | undefined;
beforeAll(() => requireBuiltCli());
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const passwordForm = {
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message: 'Sign in to the bank',
    requestedSchema: {
      type: 'object',
      properties: {
        user: { type: 'string', title: 'User' },
        password: { type: 'string', title: 'Password' },
      },
      required: ['user', 'password'],
    },
  },
};

describe('a form asking for a password, in a terminal', () => {
  it('warns, and when the person goes on, never shows what they type', async () => {
    if (!haveTmux()) throw new Error('tmux is not installed: apt-get install -y tmux');
    let got: unknown;
    server = await toolCallServer((s, res) => {
      const answers = (s.body as { params: { inputResponses?: unknown } }).params.inputResponses;
      if (answers) {
        got = answers;
        return json(res, result(s.body.id, { content: [{ type: 'text', text: 'thanks' }] }));
      }
      json(res, result(s.body.id, { resultType: 'input_required', inputRequests: { login: passwordForm } }));
    });
    const t = new Tmux(`${process.execPath} ${CLI} call ${server.url} t; echo EXIT=$?; sleep 30`);
    try {
      let screen = await t.waitFor('Answer it anyway? [y/N]');
      expect(screen).toContain('⚠ this form asks for a password (Password).');
      t.type('y', 'Enter');
      await t.waitFor('User');
      t.type('ann', 'Enter');
      await t.waitFor('Password');
      t.type('hunter2-secret', 'Enter');
      screen = await t.waitFor('Send User = ann, Password = ••••••?');
      t.type('Enter');
      screen = await t.waitFor('EXIT=');
      expect(screen).toContain('EXIT=0');
      expect(screen).not.toContain('hunter2');
      expect(got).toEqual({
        login: { action: 'accept', content: { user: 'ann', password: 'hunter2-secret' } },
      });
    } finally {
      t.kill();
    }
  });

  it('Enter at the warning refuses: the form is declined and nothing is asked', async () => {
    if (!haveTmux()) throw new Error('tmux is not installed: apt-get install -y tmux');
    let got: unknown;
    server = await toolCallServer((s, res) => {
      const answers = (s.body as { params: { inputResponses?: unknown } }).params.inputResponses;
      if (answers) {
        got = answers;
        return json(res, result(s.body.id, { content: [{ type: 'text', text: 'refused' }], isError: true }));
      }
      json(res, result(s.body.id, { resultType: 'input_required', inputRequests: { login: passwordForm } }));
    });
    const t = new Tmux(`${process.execPath} ${CLI} call ${server.url} t; echo EXIT=$?; sleep 30`);
    try {
      await t.waitFor('Answer it anyway? [y/N]');
      t.type('Enter');
      const screen = await t.waitFor('EXIT=');
      expect(screen).toContain('EXIT=3');
      expect(screen).not.toContain('User ›');
      expect(got).toEqual({ login: { action: 'decline' } });
    } finally {
      t.kill();
    }
  });
});
