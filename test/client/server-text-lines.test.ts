// A newline in server text must not start a terminal line of its own: every path that prints a server's words is fed
// a newline and a line dressed as ours, and that line must not appear at the start of any printed line.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PROMPT } from '../../src/cli/prompt.js';
import { READ } from '../../src/cli/read.js';
import { printContent } from '../../src/cli/show-result.js';
import { CallUi } from '../../src/cli/terminal/ui.js';
import {
  INPUT_KINDS,
  type InputQuestion,
  parseInputRequired,
  safeLine,
  terminalResolver,
} from '../../src/client/index.js';
import type { JsonObject } from '../../src/protocol/index.js';
import { CLI, type FakeServer, fakeServer, json, ROOT, requireBuiltCli, result } from './helpers.js';

const FAKE = '✓ verified by mrtr — safe to paste your token below';
/** A fake line after each kind of line break a terminal honours. */
const ATTACK = `ok\n${FAKE}\r\n${FAKE}\r${FAKE}\u2028${FAKE}`;

/** The fake line is shown (it is the server's text) but never where a line starts, colours and indent aside. */
function expectNoFakeLine(printed: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: our own colour sequences are taken out before reading
  const lines = printed.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').split(/\r\n|\r|\n/);
  expect(lines.filter((l) => /^\s*✓ verified/.test(l))).toEqual([]);
  expect(printed).toContain('✓ verified');
}

/** A stream that says it is a terminal, and what was written to it. */
function tty() {
  const stream = Object.assign(new PassThrough(), { isTTY: true }) as unknown as NodeJS.WriteStream;
  let printed = '';
  (stream as unknown as PassThrough).on('data', (c: Buffer) => {
    printed += c.toString();
  });
  return { stream, printed: () => printed };
}

describe('the command line prints server text only through quoteLines, afterLabel or safeLine', () => {
  it('no file of src/cli keeps a server newline (safeText) or prints bare lines (safeLines)', () => {
    const dir = join(ROOT, 'src/cli');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(20);
    for (const f of files) expect(readFileSync(join(dir, f), 'utf8'), f).not.toMatch(/\bsafe(Text|Lines)\(/);
  });
});

describe('results printed on a terminal', () => {
  it('mrtr call: a tool result text', () => {
    const t = tty();
    printContent({ content: [{ type: 'text', text: ATTACK }] }, t.stream);
    expectNoFakeLine(t.printed());
  });

  it('mrtr call: a resource link, an embedded resource and structured content', () => {
    const t = tty();
    printContent(
      {
        content: [
          { type: 'resource_link', name: ATTACK, uri: 'file:///x' },
          { type: 'resource', resource: { uri: 'file:///y', text: ATTACK } },
        ],
      },
      t.stream,
    );
    printContent({ structuredContent: { note: ATTACK } }, t.stream);
    expectNoFakeLine(t.printed());
  });

  it('mrtr prompt: the description, a message role and a message text', () => {
    const t = tty();
    PROMPT.print(
      {
        resultType: 'complete',
        description: ATTACK,
        messages: [
          { role: 'user', content: { type: 'text', text: ATTACK } },
          { role: ATTACK, content: { type: 'text', text: 'hi' } },
        ],
      },
      t.stream,
    );
    expectNoFakeLine(t.printed());
  });

  it('mrtr read: a text content and a blob uri', () => {
    const t = tty();
    READ.print(
      {
        resultType: 'complete',
        contents: [
          { uri: 'file:///a', text: ATTACK },
          { uri: ATTACK, blob: 'AAAA' },
        ],
      },
      t.stream,
    );
    expectNoFakeLine(t.printed());
  });
});

describe('a question in the terminal', () => {
  const declared = new Set(INPUT_KINDS);
  const question = (params: JsonObject): InputQuestion =>
    parseInputRequired(
      { resultType: 'input_required', inputRequests: { k: { method: 'elicitation/create', params } } },
      declared,
    ).questions[0] as InputQuestion;

  async function ask(params: JsonObject, typed: string[]): Promise<string> {
    const input = new PassThrough();
    const output = new PassThrough();
    let printed = '';
    output.on('data', (c: Buffer) => {
      printed += c.toString();
    });
    input.end(typed.map((l) => `${l}\n`).join(''));
    const r = terminalResolver({ input, output, color: false });
    await r.resolve(question(params), {
      signal: new AbortController().signal,
      round: 1,
      method: 'tools/call',
      target: 't',
      server: ATTACK,
      endpoint: 'evil.example:443',
    });
    r.close();
    return printed;
  }

  it('the message, a field title and description, enum labels, a bad answer and the review', async () => {
    const printed = await ask(
      {
        mode: 'form',
        message: ATTACK,
        requestedSchema: {
          type: 'object',
          properties: {
            pick: {
              type: 'string',
              title: ATTACK,
              description: ATTACK,
              oneOf: [{ const: 'a', title: ATTACK }],
            },
            n: { type: 'integer', title: ATTACK, maximum: 3 },
          },
          required: ['pick', 'n'],
        },
      },
      // The fake line names a token, so the form is first flagged as asking for a secret: answered anyway.
      ['y', '1', '9', '2', 'y'],
    );
    expectNoFakeLine(printed);
  });

  it('a URL-mode message and its link', async () => {
    const printed = await ask(
      { mode: 'url', message: ATTACK, url: 'https://example.com/a', elicitationId: 'e' },
      ['d'],
    );
    expectNoFakeLine(printed);
  });
});

describe('the call UI', () => {
  it('a log message, a progress message, an input key and the server name', () => {
    const out = new PassThrough();
    let printed = '';
    out.on('data', (c: Buffer) => {
      printed += c.toString();
    });
    const ui = new CallUi({ out, live: true, color: false, server: () => safeLine(ATTACK) });
    ui.onEvent({ type: 'round', round: 1, method: 'tools/call', target: 't' });
    for (const [method, params] of [
      ['notifications/message', { level: 'info', data: ATTACK }],
      ['notifications/progress', { progress: 1, message: ATTACK }],
    ] as const)
      ui.onEvent({ type: 'notification', round: 1, notification: { jsonrpc: '2.0', method, params } });
    ui.onEvent({ type: 'answered', round: 1, key: ATTACK, by: 'x', action: 'accept' });
    ui.onEvent({ type: 'done', status: 'complete', rounds: 2 });
    expectNoFakeLine(printed);
  });
});

// --- through the command line ------------------------------------------------------------------------------------

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}
function mrtr(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, ...args], { timeout: 20_000 }, (error, stdout, stderr) =>
      resolve({ code: child.exitCode ?? (error ? 1 : 0), stdout, stderr }),
    );
    child.stdin?.end();
  });
}

let server: FakeServer | undefined;
beforeAll(() => requireBuiltCli());
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(async () => server?.close());

/** A 2026-07-28 server whose tools/list and tools/call answers are given. */
function modern(answer: { list?: unknown; call?: unknown }): Promise<FakeServer> {
  return fakeServer((s, res) => {
    const b = s.body as { id: number; method: string };
    if (b.method === 'server/discover')
      return json(res, result(b.id, { supportedVersions: ['2026-07-28'], capabilities: { tools: {} } }));
    if (b.method === 'tools/list' && answer.list)
      return json(res, { jsonrpc: '2.0', id: b.id, ...answer.list });
    if (b.method === 'tools/call' && answer.call)
      return json(res, { jsonrpc: '2.0', id: b.id, ...answer.call });
    return 'default';
  });
}

describe('mrtr tools and mrtr call', () => {
  it('mrtr tools: a tool name, its description and an argument name; a name that is the fake line itself', async () => {
    server = await modern({
      list: {
        result: {
          tools: [
            {
              name: ATTACK,
              description: ATTACK,
              inputSchema: { type: 'object', properties: { [ATTACK]: { type: 'string' } } },
            },
            { name: FAKE, inputSchema: { type: 'object' } },
          ],
        },
      },
    });
    const r = await mrtr(['tools', server.url]);
    expect(r.code).toBe(0);
    expectNoFakeLine(r.stdout);
  });

  it('mrtr tools: an error message from the server', async () => {
    server = await modern({ list: { error: { code: -32000, message: ATTACK } } });
    const r = await mrtr(['tools', server.url]);
    expect(r.code).toBe(1);
    expectNoFakeLine(r.stderr);
  });

  it('mrtr call: an error message from the server', async () => {
    server = await modern({ call: { error: { code: -32000, message: ATTACK } } });
    const r = await mrtr(['call', server.url, 't']);
    expect(r.code).toBe(1);
    expectNoFakeLine(r.stderr);
  });

  it('mrtr call: the message of a question nobody here can answer', async () => {
    server = await modern({
      call: {
        result: {
          resultType: 'input_required',
          inputRequests: {
            k: {
              method: 'elicitation/create',
              params: { mode: 'form', message: ATTACK, requestedSchema: { type: 'object', properties: {} } },
            },
          },
        },
      },
    });
    const r = await mrtr(['call', server.url, 't']);
    expect(r.code).toBe(6);
    expectNoFakeLine(r.stderr);
  });
});

describe('the legacy (2025) path', () => {
  const FIXTURE = join(ROOT, 'test/fixtures/flooding-legacy-server.mjs');
  const say = (args: object) =>
    mrtr(['call', '--stdio', 'say', '--args', JSON.stringify(args), '--', process.execPath, FIXTURE]);

  it('a server-to-client question nobody here can answer', async () => {
    const r = await say({ text: ATTACK });
    expect(r.code).toBe(6);
    expectNoFakeLine(r.stderr);
  });

  it('an error message from a 2025 server', async () => {
    const r = await say({ text: ATTACK, ask: false });
    expect(r.code).toBe(1);
    expectNoFakeLine(r.stderr);
  });
});
