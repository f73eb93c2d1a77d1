// The command line looks names up as its tables' own entries and keeps names a server chose as plain keys: a
// person typing `constructor` gets "unknown", never an Object member called in its place, and a question, form field
// or argument named `__proto__`, `constructor` or `prototype` is answered like any other.
import { execFile } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import type { InputRequests } from '../../src/protocol/index.js';
import { inputRequired, McpServer, text } from '../../src/server/index.js';
import { CLI, requireBuiltCli } from '../client/helpers.js';
import { runCommand } from '../helpers/run-cli.js';

const NAMES = ['__proto__', 'constructor', 'prototype'] as const;
const quiet = { info() {}, warn() {}, error() {} };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI without blocking the event loop (the server it calls lives in this process). */
const mrtr = (args: string[], env: Record<string, string> = {}): Promise<Run> =>
  new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, ...env }, timeout: 20_000 },
      (_error, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
    );
    child.stdin?.end();
  });

// Built from JSON text: an object literal `{ __proto__: … }` would set a prototype instead of naming a field.
const stringFields = () =>
  JSON.parse(
    `{"type":"object","properties":{${NAMES.map((n) => `${JSON.stringify(n)}:{"type":"string"}`).join(',')}},` +
      `"required":${JSON.stringify(NAMES)}}`,
  );
const ownStrings = (obj: unknown): string[] =>
  NAMES.map((n) => (obj && Object.hasOwn(obj, n) ? String((obj as Record<string, unknown>)[n]) : '-'));

beforeAll(() => requireBuiltCli());

describe('names a person types', () => {
  it.each([...NAMES, 'toString'])('mrtr serve --fixture %s is an unknown fixture', async (name) => {
    const out = await runCommand(process.execPath, [CLI, 'serve', '--fixture', name, '--port', '0'], {
      encoding: 'utf8',
      timeout: 25_000,
    });
    expect(out.status).toBe(2);
    expect(out.stderr).toContain(`unknown fixture '${name}' (choose example, conformance, workflows, demo)`);
  });

  it.each([...NAMES, 'toString'])('conformance-client scenario %s is unknown, not done', async (name) => {
    // The URL is never reached: an unknown scenario stops before any request.
    const out = await mrtr(['conformance-client', 'http://127.0.0.1:9/mcp'], {
      MCP_CONFORMANCE_SCENARIO: name,
    });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`unknown scenario '${name}'`);
    expect(out.stdout).not.toContain('done');
  });
});

describe('names a server chose', () => {
  it('mrtr call --answers answers questions keyed __proto__, constructor and prototype', async () => {
    const nameForm = JSON.parse(
      '{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}',
    );
    const server = new McpServer({ name: 'keys', version: '1', logger: quiet }).tool(
      { name: 'three', description: 'Asks three questions with special keys' },
      (_args, ctx) => {
        const names = NAMES.map((k) =>
          Object.hasOwn(ctx.inputResponses, k)
            ? (ctx.inputResponses[k] as { content?: { name?: string } }).content?.name
            : undefined,
        );
        if (names.every((n) => typeof n === 'string')) return text(names.join(' '));
        const inputRequests: InputRequests = Object.create(null);
        for (const k of NAMES)
          inputRequests[k] = {
            method: 'elicitation/create',
            params: { mode: 'form', message: `Name for ${k}?`, requestedSchema: nameForm },
          };
        return inputRequired({ inputRequests });
      },
    );
    const endpoint = await server.listen({ port: 0 });
    try {
      const answers = '{"__proto__":"Ada","constructor":"Grace","prototype":"Alan"}';
      const out = await mrtr(['call', endpoint.url, 'three', '--answers', answers, '--json']);
      expect(JSON.parse(out.stdout)).toMatchObject({
        status: 'complete',
        exitCode: 0,
        result: { content: [{ type: 'text', text: 'Ada Grace Alan' }] },
      });
    } finally {
      await endpoint.close();
    }
  });

  it('conformance-client fills arguments and form fields named __proto__, constructor and prototype', async () => {
    const seen: string[][] = [];
    const server = new McpServer({ name: 'fields', version: '1', logger: quiet }).tool(
      { name: 'fields', description: 'Special argument and field names', input: stringFields() },
      (args, ctx) => {
        const answer = ctx.inputResponses.form as { content?: unknown } | undefined;
        if (!answer)
          return inputRequired({
            inputRequests: {
              form: {
                method: 'elicitation/create',
                params: { mode: 'form', message: 'Fill in', requestedSchema: stringFields() },
              },
            },
          });
        seen.push(ownStrings(args), ownStrings(answer.content));
        return text('ok');
      },
    );
    const endpoint = await server.listen({ port: 0 });
    try {
      const out = await mrtr(['conformance-client', endpoint.url], {
        MCP_CONFORMANCE_SCENARIO: 'http-invalid-tool-headers',
      });
      expect(out.stderr).toBe('');
      expect(out.code).toBe(0);
      expect(seen).toEqual([
        ['us-west1', 'us-west1', 'us-west1'],
        ['ok', 'ok', 'ok'],
      ]);
    } finally {
      await endpoint.close();
    }
  });
});
