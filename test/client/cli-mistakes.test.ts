// `mrtr call` tried as a new user would, against the example server: every mistake gets a message that names what
// is wrong and the way out, and the exit code that fits it.
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer } from '../../src/cli/demo-servers/example.js';
import type { HttpEndpoint } from '../../src/server/index.js';
import { CLI, type FakeServer, json, requireBuiltCli, result, toolCallServer } from './helpers.js';

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

let endpoint: HttpEndpoint;
beforeAll(async () => {
  requireBuiltCli();
  endpoint = await exampleServer().listen({ port: 0 });
});
afterAll(() => endpoint?.close());

const resolveBug = (args: string, answers: string, ...flags: string[]) =>
  mrtr(['call', endpoint.url, 'resolve_bug', '--args', args, '--answers', answers, ...flags]);

describe('answers as people write them', () => {
  it('"yes"/"y" for a yes/no question and "7" for a whole number', async () => {
    for (const yes of ['"yes"', '"y"', '"Yes"', 'true']) {
      const r = await resolveBug('{"id":42}', `{"resolution":"Duplicate","original":"7","confirm":${yes}}`);
      expect(r, yes).toMatchObject({ code: 0, stdout: 'Bug 42 resolved as Duplicate (duplicate of 7)\n' });
    }
  });

  it('"no" answers a yes/no question with false (it is not refused as a wrong type)', async () => {
    const r = await resolveBug('{"id":42}', '{"resolution":"Fixed","confirm":"no"}', '--json');
    const report = JSON.parse(r.stdout);
    expect(report.status).toBe('complete');
    expect(r.stderr).not.toMatch(/does not fit/);
  });

  it('a string that is not a number for a number field is a usage error naming the key and the field', async () => {
    const r = await resolveBug('{"id":42}', '{"resolution":"Duplicate","original":"seven"}');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--answers\["original"\] does not fit the question: .*must be a number/);
  });
});

describe('keys', () => {
  it('a question nobody answered is named with its input key, and the --answers to pass', async () => {
    const r = await mrtr(['call', endpoint.url, 'resolve_bug', '--args', '{"id":3}']);
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(
      /needs a person to answer "How was bug 3 resolved\?" \(input key "resolution"; nothing here/,
    );
    expect(r.stderr).toMatch(/pass --answers '\{"resolution": …\}'/);
  });

  it('a handler with default keys (q1): the key is shown, and answering it works', async () => {
    let server: FakeServer | undefined;
    try {
      server = await toolCallServer((s, res) => {
        if (s.body.params.inputResponses)
          return json(res, result(s.body.id, { content: [{ type: 'text', text: 'thanks' }] }));
        json(
          res,
          result(s.body.id, {
            resultType: 'input_required',
            inputRequests: {
              q1: {
                method: 'elicitation/create',
                params: {
                  mode: 'form',
                  message: 'Your name?',
                  requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
                },
              },
            },
          }),
        );
      });
      const miss = await mrtr(['call', server.url, 't', '--answers', '{"name":"Ann"}']);
      expect(miss.code).toBe(6);
      expect(miss.stderr).toMatch(/\(input key "q1"/);
      expect(miss.stderr).toMatch(/warning: no question used --answers "name" \(keys asked: "q1"\)/);
      const hit = await mrtr(['call', server.url, 't', '--answers', '{"q1":"Ann"}']);
      expect(hit).toMatchObject({ code: 0, stdout: 'thanks\n' });
    } finally {
      await server?.close();
    }
  });

  it('a typo in an --answers key is warned about, not silently ignored', async () => {
    const r = await resolveBug('{"id":3}', '{"resolution":"Fixed","confrim":"yes"}');
    expect(r.stderr).toMatch(
      /warning: no question used --answers "confrim" \(keys asked: "resolution", "confirm"\)/,
    );
  });

  it('a cancel is reported as cancelled, not declined', async () => {
    const r = await resolveBug('{"id":3}', '{"resolution":"Fixed","confirm":"cancel"}');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/mrtr call: cancelled confirm; the tool reported an error/);
  });
});

describe('the command line', () => {
  it('--args and --answers JSON errors name the flag', async () => {
    const a = await mrtr(['call', endpoint.url, 'echo', '--args', '{bad']);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/mrtr call: --args is not valid JSON \(/);
    const b = await mrtr(['call', endpoint.url, 'echo', '--answers', '[1]']);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/mrtr call: --answers must be a JSON object mapping input keys to answers/);
  });

  it('--arg gets "did you mean --args"', async () => {
    const r = await mrtr(['call', endpoint.url, 'echo', '--arg', '{}']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/mrtr call: unknown option --arg \(did you mean --args\?\)/);
    const t = await mrtr(['tools', endpoint.url, '--jsn']);
    expect(t.stderr).toMatch(/unknown option --jsn \(did you mean --json\?\)/);
  });

  it('a URL without a scheme gets "did you mean http://…"', async () => {
    const r = await mrtr(['call', 'localhost:3000/mcp', 'echo']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /'localhost:3000\/mcp' has no scheme: did you mean http:\/\/localhost:3000\/mcp \?/,
    );
  });

  it('https:// against a plain-HTTP server says so, without OpenSSL text', async () => {
    const r = await mrtr(['call', endpoint.url.replace('http:', 'https:'), 'echo']);
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(
      /does not speak TLS \(https\): is it a plain-HTTP server\? Try http:\/\/127\.0\.0\.1/,
    );
    expect(r.stderr).not.toMatch(/ssl3|openssl|0A00010B/i);
  });

  it("a wrong path is a usage error (exit 2) with the server's word on where the endpoint is", async () => {
    const r = await mrtr(['call', endpoint.url.replace('/mcp', '/mc'), 'echo']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /no MCP endpoint at http:\/\/127\.0\.0\.1:\d+\/mc \(HTTP 404: Not found: the MCP endpoint is \/mcp\)/,
    );
    const t = await mrtr(['tools', endpoint.url.replace('/mcp', '/mc')]);
    expect(t.code).toBe(2);
  });

  it('--stdio without a command, or a command without --stdio, is a usage error', async () => {
    expect((await mrtr(['call', '--stdio', 'echo'])).stderr).toMatch(
      /--stdio needs the server command after --/,
    );
    expect((await mrtr(['call', endpoint.url, 'echo', '--', 'node'])).stderr).toMatch(
      /a command after -- needs --stdio/,
    );
    expect((await mrtr(['tools', '--stdio'])).code).toBe(2);
  });
});

describe('mrtr prompt and mrtr read', () => {
  it('mrtr prompt carries a prompt through its question (--answers) and prints its messages', async () => {
    const r = await mrtr(['prompt', endpoint.url, 'triage_note', '--answers', '{"severity":"high"}']);
    expect(r).toMatchObject({ code: 0, stdout: 'user: Write a high-severity triage note.\n' });
    const miss = await mrtr(['prompt', endpoint.url, 'triage_note']);
    expect(miss.code).toBe(6);
    expect(miss.stderr).toMatch(
      /mrtr prompt: needs a person to answer "Severity of the incident\?" \(input key "severity"/,
    );
    const j = await mrtr([
      'prompt',
      endpoint.url,
      'triage_note',
      '--answers',
      '{"severity":"low"}',
      '--json',
    ]);
    expect(JSON.parse(j.stdout)).toMatchObject({
      status: 'complete',
      rounds: 2,
      result: { messages: [{ role: 'user' }] },
    });
  });

  it('mrtr prompt refuses non-string arguments before sending; mrtr read takes no --args', async () => {
    const bad = await mrtr(['prompt', endpoint.url, 'triage_note', '--args', '{"n":1}']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--args\["n"\] must be a string/);
    const noArgs = await mrtr(['read', endpoint.url, 'helpdesk://policy', '--args', '{}']);
    expect(noArgs.code).toBe(2);
    expect(noArgs.stderr).toMatch(/unknown option --args/);
  });

  it("mrtr read prints a resource's text", async () => {
    const r = await mrtr(['read', endpoint.url, 'helpdesk://policy']);
    expect(r).toMatchObject({ code: 0, stdout: 'Duplicates must name the original bug.\n' });
    const none = await mrtr(['read', endpoint.url, 'helpdesk://nothing', '--json']);
    expect(none.code).toBe(1);
    expect(JSON.parse(none.stdout).status).toBe('server_error');
  });
});

describe('mrtr call --stdio', () => {
  it('launches the example server over stdio and carries resolve_bug through its rounds', async () => {
    const r = await mrtr([
      'call',
      '--stdio',
      'resolve_bug',
      '--args',
      '{"id":4}',
      '--answers',
      '{"resolution":"Fixed","confirm":"y"}',
      '--json',
      '--',
      process.execPath,
      CLI,
      'serve',
      '--stdio',
      '--fixture',
      'example',
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'complete', rounds: 3 });
    const tools = await mrtr([
      'tools',
      '--stdio',
      '--',
      process.execPath,
      CLI,
      'serve',
      '--stdio',
      '--fixture',
      'example',
    ]);
    expect(tools.code).toBe(0);
    expect(tools.stdout).toMatch(/resolve_bug\s+Resolve a bug/);
  });
});
