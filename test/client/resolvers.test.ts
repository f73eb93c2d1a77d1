// Forms, the terminal resolver (driven through streams), and the scripted and policy resolvers. (The x-mcp-header
// rule is tested in test/protocol/x-mcp-header.test.ts.)
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  agentPolicyResolver,
  type InputQuestion,
  parseInputRequired,
  type ResolveContext,
  scriptedResolver,
  terminalResolver,
} from '../../src/client/index.js';
import { checkContent, parseTyped, readForm } from '../../src/client/internal.js';
import type { JsonObject } from '../../src/protocol/index.js';

const ALL = new Set(['elicitation.form', 'elicitation.url', 'sampling', 'roots'] as const);

function question(params: JsonObject, key = 'q'): InputQuestion {
  const parsed = parseInputRequired(
    { resultType: 'input_required', inputRequests: { [key]: { method: 'elicitation/create', params } } },
    ALL,
  );
  return parsed.questions[0] as InputQuestion;
}

const ctx = (): ResolveContext => ({
  signal: new AbortController().signal,
  round: 1,
  method: 'tools/call',
  target: 't',
  server: 'test-server',
});

/** Run the terminal resolver on a question, typing `lines`; returns the answer and the screen. */
async function typeInto(params: JsonObject, lines: string[]) {
  const input = new PassThrough();
  const output = new PassThrough();
  let screen = '';
  output.on('data', (d: Buffer) => {
    screen += d.toString();
  });
  const r = terminalResolver({ input, output, color: false });
  input.write(lines.map((l) => `${l}\n`).join(''));
  const answer = await r.resolve(question(params), ctx());
  r.close();
  return { answer, screen };
}

const form = (
  properties: JsonObject,
  required: string[] = Object.keys(properties),
  message = 'Fill this in',
) => ({
  mode: 'form',
  message,
  requestedSchema: { type: 'object', properties, required },
});

describe('form schema', () => {
  it('reads every field type of the subset', () => {
    const fields = readForm({
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email', title: 'Email' },
        age: { type: 'integer', minimum: 18, maximum: 130 },
        score: { type: 'number', exclusiveMinimum: 0 },
        ok: { type: 'boolean', default: true },
        color: { type: 'string', enum: ['Red', 'Green'] },
        titled: { type: 'string', oneOf: [{ const: '#f00', title: 'Red' }] },
        many: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] }, minItems: 1, maxItems: 2 },
        manyTitled: { type: 'array', items: { anyOf: [{ const: 'x', title: 'Ex' }] } },
        weird: { type: 'object' },
      },
      required: ['email'],
    });
    expect(fields.map((f) => `${f.name}:${f.type}`)).toEqual([
      'email:string',
      'age:integer',
      'score:number',
      'ok:boolean',
      'color:choice',
      'titled:choice',
      'many:multi',
      'manyTitled:multi',
      'weird:json',
    ]);
    expect(fields[0]).toMatchObject({ label: 'Email', required: true, format: 'email' });
    expect(fields[3]).toMatchObject({ default: true, required: false });
  });

  it('parses and validates typed answers with messages a person can act on', () => {
    const [email, age, score, ok, color, , many] = readForm({
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email' },
        age: { type: 'integer', minimum: 18 },
        score: { type: 'number', exclusiveMinimum: 0 },
        ok: { type: 'boolean' },
        color: { type: 'string', enum: ['Red', 'Green'] },
        x: { type: 'string' },
        many: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] }, maxItems: 2 },
      },
      required: ['email', 'age'],
    });
    if (!email || !age || !score || !ok || !color || !many) throw new Error('fields');
    expect(parseTyped(email, 'nope')).toEqual({ ok: false, message: expect.stringMatching(/email address/) });
    expect(parseTyped(email, 'a@b.co')).toEqual({ ok: true, value: 'a@b.co' });
    expect(parseTyped(email, '')).toEqual({ ok: false, message: 'an answer is required' });
    expect(parseTyped(age, '17')).toEqual({ ok: false, message: 'must be at least 18' });
    expect(parseTyped(age, '18.5')).toEqual({ ok: false, message: 'must be a whole number' });
    expect(parseTyped(age, '12abc')).toEqual({ ok: false, message: 'must be a number' });
    expect(parseTyped(age, '40')).toEqual({ ok: true, value: 40 });
    expect(parseTyped(score, '0')).toEqual({ ok: false, message: 'must be more than 0' });
    expect(parseTyped(ok, 'Y')).toEqual({ ok: true, value: true });
    expect(parseTyped(ok, 'maybe')).toEqual({ ok: false, message: 'answer y or n' });
    expect(parseTyped(ok, '')).toEqual({ ok: true, value: undefined });
    expect(parseTyped(color, '2')).toEqual({ ok: true, value: 'Green' });
    expect(parseTyped(color, 'red')).toEqual({ ok: true, value: 'Red' });
    expect(parseTyped(color, '3').ok).toBe(false);
    expect(parseTyped(many, '1, c')).toEqual({ ok: true, value: ['a', 'c'] });
    expect(parseTyped(many, '1,2,3')).toEqual({ ok: false, message: 'choose at most 2' });
    expect(
      checkContent(readForm(form({ d: { type: 'string', format: 'date' } }).requestedSchema), {
        d: '2026-02-30',
      }),
    ).toMatch(/must be a date/);
    expect(
      checkContent(readForm(form({ d: { type: 'string', format: 'date-time' } }).requestedSchema), {
        d: '2026-07-28T10:00:00Z',
      }),
    ).toBe(undefined);
    expect(
      checkContent(readForm(form({ u: { type: 'string', format: 'uri' } }).requestedSchema), {
        u: 'not a uri',
      }),
    ).toMatch(/URI/);
    expect(
      checkContent(readForm(form({ n: { type: 'string', minLength: 3 } }).requestedSchema), { n: 'ab' }),
    ).toMatch(/at least 3/);
  });
});

describe('terminal resolver', () => {
  it('asks each field, re-asks on invalid input with a message, uses defaults, and reviews before sending', async () => {
    const { answer, screen } = await typeInto(
      form(
        {
          name: { type: 'string', title: 'Your name', minLength: 2 },
          email: { type: 'string', format: 'email', title: 'Email' },
          age: { type: 'integer', minimum: 18, title: 'Age' },
          color: {
            type: 'string',
            title: 'Colour',
            oneOf: [
              { const: '#f00', title: 'Red' },
              { const: '#0f0', title: 'Green' },
            ],
          },
          tags: {
            type: 'array',
            title: 'Tags',
            items: { type: 'string', enum: ['a', 'b', 'c'] },
            minItems: 1,
          },
          news: { type: 'boolean', title: 'Newsletter', default: false },
          nick: { type: 'string', title: 'Nickname', default: 'ace' },
        },
        ['name', 'email', 'age', 'color', 'tags'],
        'Tell us about you',
      ),
      ['A', 'Ada', 'ada-at-example', 'ada@example.com', '12', '36', '5', '2', '', 'a,c', '', '', 'y'],
    );
    expect(answer).toEqual({
      action: 'accept',
      content: {
        name: 'Ada',
        email: 'ada@example.com',
        age: 36,
        color: '#0f0',
        tags: ['a', 'c'],
        news: false,
        nick: 'ace',
      },
    });
    expect(screen).toContain('test-server asks');
    expect(screen).toContain('Tell us about you');
    expect(screen).toContain('✗ must be at least 2 characters');
    expect(screen).toContain('✗ must be an email address');
    expect(screen).toContain('✗ must be at least 18');
    expect(screen).toContain('✗ choose 1-2 or type an option');
    expect(screen).toContain('✗ an answer is required');
    expect(screen).toContain('1) Red');
    expect(screen).toContain('default ace');
    expect(screen).toMatch(/Send .*Colour = Green.*Tags = a, c/);
    expect(screen).toContain('╰─ sent');
  });

  it('lets the person edit after review, and decline or cancel at any prompt', async () => {
    const edit = await typeInto(form({ n: { type: 'integer', title: 'N' } }), ['1', 'e', '2', 'y']);
    expect(edit.answer).toEqual({ action: 'accept', content: { n: 2 } });
    const decline = await typeInto(form({ a: { type: 'string' }, b: { type: 'string' } }), ['x', '/decline']);
    expect(decline.answer).toEqual({ action: 'decline' });
    expect(decline.screen).toContain('declined');
    const cancel = await typeInto(form({ a: { type: 'string' } }), ['/cancel']);
    expect(cancel.answer).toEqual({ action: 'cancel' });
    const atReview = await typeInto(form({ a: { type: 'string' } }), ['x', 'd']);
    expect(atReview.answer).toEqual({ action: 'decline' });
  });

  it('takes a lone yes/no as its own confirmation', async () => {
    const { answer, screen } = await typeInto(form({ confirm: { type: 'boolean', title: 'Close it' } }), [
      'y',
    ]);
    expect(answer).toEqual({ action: 'accept', content: { confirm: true } });
    expect(screen).not.toContain('Send');
  });

  it('marks questions only a person may answer', async () => {
    const { screen } = await typeInto(
      { ...form({ ok: { type: 'boolean' } }), _meta: { 'dev.mrtr/humanRequired': 'approval' } },
      ['n'],
    );
    expect(screen).toContain('your approval is needed — answer it yourself');
  });

  it("a four-eyes approval's status link says a reviewer approves, not the person at the terminal", async () => {
    const { answer, screen } = await typeInto(
      {
        mode: 'url',
        message: 'Still waiting — approved by 0 of 1',
        url: 'https://ok.example/mrtr/approvals/x/status',
        elicitationId: 'e',
        _meta: { 'dev.mrtr/humanRequired': 'approval' },
      },
      ['d'],
    );
    expect(answer).toEqual({ action: 'decline' });
    expect(screen).toContain('a reviewer must approve this — only you may follow it, not an agent');
    expect(screen).not.toContain('your approval is needed');
  });

  it('URL mode: shows the full link with its host, warns about punycode and http, opens nothing', async () => {
    const { answer, screen } = await typeInto(
      {
        mode: 'url',
        message: 'Connect your bank',
        url: 'http://xn--pple-43d.com/connect?x=1',
        elicitationId: 'e',
      },
      [''],
    );
    expect(answer).toEqual({ action: 'accept' });
    expect(screen).toContain('http://xn--pple-43d.com/connect?x=1');
    expect(screen).toContain('punycode');
    expect(screen).toContain('not https');
    expect(screen).toContain('Nothing is opened for you');
    const declined = await typeInto(
      { mode: 'url', message: 'm', url: 'https://ok.example/', elicitationId: 'e' },
      ['d'],
    );
    expect(declined.answer).toEqual({ action: 'decline' });
    expect(declined.screen).not.toContain('punycode');
  });

  it('strips terminal control sequences from server text', async () => {
    const { screen } = await typeInto(form({ a: { type: 'string' } }, ['a'], 'Hi\x1b[2J\x1b[31mred\x07'), [
      'x',
      'y',
    ]);
    expect(screen).toContain('Hired');
    expect(screen).not.toContain('\x1b[2J');
    expect(screen).not.toContain('\x07');
  });

  it('ends the call when the input closes, and when aborted', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    output.resume();
    const r = terminalResolver({ input, output, color: false });
    const pending = r.resolve(question(form({ a: { type: 'string' } })), ctx());
    input.end();
    await expect(pending).rejects.toMatchObject({ name: 'RequestAborted' });
    const input2 = new PassThrough();
    const output2 = new PassThrough();
    // Abort while the field's prompt waits for a line: once the prompt is on the screen.
    let screen = '';
    const prompted = new Promise<void>((resolve) =>
      output2.on('data', (chunk: Buffer) => {
        screen += chunk.toString();
        if (screen.endsWith('│  a › ')) resolve();
      }),
    );
    const r2 = terminalResolver({ input: input2, output: output2, color: false });
    const controller = new AbortController();
    const p2 = r2.resolve(question(form({ a: { type: 'string' } })), { ...ctx(), signal: controller.signal });
    await prompted;
    controller.abort(new Error('stop'));
    await expect(p2).rejects.toMatchObject({ name: 'RequestAborted' });
    r2.close();
  });

  it('asks concurrent questions one at a time: the next is drawn only once the one before is answered', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let screen = '';
    let onPrompt = () => {};
    output.on('data', (chunk: Buffer) => {
      screen += chunk.toString();
      if (screen.endsWith(' › ')) onPrompt();
    });
    const prompted = () =>
      new Promise<void>((resolve) => {
        onPrompt = resolve;
      });
    const r = terminalResolver({ input, output, color: false, review: false });
    const controller = new AbortController();
    let first = prompted();
    const a = r.resolve(question(form({ a: { type: 'string' } }, ['a'], 'First?'), 'one'), ctx());
    const b = r.resolve(question(form({ b: { type: 'string' } }, ['b'], 'Second?'), 'two'), ctx());
    const gone = r.resolve(question(form({ c: { type: 'string' } }, ['c'], 'Withdrawn?'), 'three'), {
      ...ctx(),
      signal: controller.signal,
    });
    await first;
    expect(screen).toContain('First?');
    expect(screen).not.toContain('Second?');
    // A question withdrawn while it waits its turn is never drawn.
    controller.abort(new Error('the call ended'));
    await expect(gone).rejects.toMatchObject({ name: 'RequestAborted' });
    first = prompted();
    input.write('alpha\n');
    await expect(a).resolves.toEqual({ action: 'accept', content: { a: 'alpha' } });
    await first;
    expect(screen).toContain('Second?');
    input.write('beta\n');
    await expect(b).resolves.toEqual({ action: 'accept', content: { b: 'beta' } });
    expect(screen).not.toContain('Withdrawn?');
    r.close();
  });
});

describe('scripted and policy resolvers', () => {
  const confirm = question(form({ confirm: { type: 'boolean' } }), 'confirm');
  const data = question(form({ n: { type: 'integer', minimum: 1 } }), 'n');

  it('scripted: answers from the map, confirmations default to yes when asked to, validates when asked to', async () => {
    const invalid: string[] = [];
    const r = scriptedResolver(
      { n: { action: 'accept', content: { n: 0 } } },
      { confirmDefault: true, validate: true, onInvalid: (k, p) => invalid.push(`${k}: ${p}`) },
    );
    expect(r.accepts(confirm, ctx())).toBe(true);
    expect(await r.resolve(confirm, ctx())).toEqual({ action: 'accept', content: { confirm: true } });
    expect(r.accepts(data, ctx())).toBe(false);
    expect(invalid).toEqual(['n: n must be at least 1']);
    const plain = scriptedResolver({});
    expect(plain.accepts(confirm, ctx())).toBe(false);
    expect(plain.person).toBe(false);
  });

  it('scripted: never defaults a confirmation a person must give', () => {
    const approval = question(
      { ...form({ ok: { type: 'boolean' } }), _meta: { 'dev.mrtr/humanRequired': 'consent' } },
      'ok',
    );
    expect(approval.personRequired).toBe('consent');
    expect(scriptedResolver({}, { confirmDefault: true }).accepts(approval, ctx())).toBe(false);
  });

  it('policy: declares the kinds of its rules, refuses human-required questions itself', () => {
    const p = agentPolicyResolver({
      rules: [
        { key: /^n$/, answer: { action: 'accept', content: { n: 3 } } },
        { kind: 'roots', answer: { roots: [] } },
      ],
    });
    expect(p.kinds).toEqual(['elicitation.form', 'roots']);
    expect(p.accepts(data, ctx())).toBe(true);
    expect(p.accepts(confirm, ctx())).toBe(false);
    const marked = question(
      { ...form({ n: { type: 'integer' } }), _meta: { 'dev.mrtr/humanRequired': 'second_factor' } },
      'n',
    );
    expect(p.accepts(marked, ctx())).toBe(false);
  });
});
