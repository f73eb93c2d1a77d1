// ask.forward over real rounds through McpServer: a handler asks its own consent, then relays a fake upstream's
// questions (a form, then a URL-mode request; or both at once) to its caller, and the answers reach the upstream
// under the upstream's own keys, which collide with the flow's on purpose.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ask } from '../../src/flow/index.js';
import type {
  ElicitUrlRequest,
  InputRequest,
  InputRequests,
  InputResponse,
} from '../../src/protocol/index.js';
import { type HttpEndpoint, McpServer, text } from '../../src/server/index.js';
import { accept, drive } from '../flow/drive.js';
import { META, mcp } from '../helpers/mcp-http.js';

const quiet = { info() {}, warn() {}, error() {} };

const ENV_FORM = {
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message: 'Deploy to which environment?',
    requestedSchema: {
      type: 'object',
      properties: {
        env: { type: 'string', enum: ['staging', 'production'] },
        replicas: { type: 'integer', minimum: 1, maximum: 5 },
      },
      required: ['env'],
    },
    // An upstream claiming mrtr's hint for itself: it must not reach the caller.
    _meta: { 'dev.mrtr/humanRequired': 'second_factor' },
  },
} as InputRequest;
const SIGN_IN: ElicitUrlRequest = {
  method: 'elicitation/create',
  params: { mode: 'url', message: 'Sign in to the deploy service', url: 'https://deploy.example/sign-in' },
};

type UpstreamReply =
  | { resultType: 'input_required'; inputRequests: InputRequests }
  | { resultType: 'complete'; text: string };

/** A stateless upstream tool: asks `q1` (a form) then `login` (URL mode), or both at once, then deploys. */
function upstream(answers: Record<string, InputResponse>, together: boolean): UpstreamReply {
  const env = answers.q1 as { action: string; content?: { env?: string; replicas?: number } } | undefined;
  const login = answers.login as { action: string } | undefined;
  if (together && (!env || !login))
    return { resultType: 'input_required', inputRequests: { q1: ENV_FORM, login: SIGN_IN } };
  if (!env) return { resultType: 'input_required', inputRequests: { q1: ENV_FORM } };
  if (env.action !== 'accept') return { resultType: 'complete', text: `upstream: ${env.action}` };
  if (!login) return { resultType: 'input_required', inputRequests: { login: SIGN_IN } };
  return {
    resultType: 'complete',
    text: `upstream deployed ${env.content?.replicas ?? 1} to ${env.content?.env} (sign-in: ${login.action})`,
  };
}

/** What the forwarded form resolved to in each round the handler ran, to compare answered and replayed values. */
const formSeen: unknown[] = [];

/** The gateway's handler: its own consent first, then each upstream question relayed until the upstream is done. */
async function relay(ask: Ask, together: boolean) {
  if (!(await ask.confirm('Let the deploy service ask you its own questions?', { humanRequired: 'consent' })))
    return text('nothing relayed');
  const answers: Record<string, InputResponse> = {};
  for (;;) {
    const reply = upstream(answers, together);
    if (reply.resultType === 'complete') return text(reply.text);
    // The upstream's key stays here, with the promise of the caller's answer: that is how the answer maps back.
    const relayed = await Promise.all(
      Object.entries(reply.inputRequests).map(
        async ([key, request]) => [key, await ask.forward(request)] as const,
      ),
    );
    for (const [key, answer] of relayed) {
      answers[key] = answer;
      if (key === 'q1') formSeen.push(answer);
    }
  }
}

let endpoint: HttpEndpoint;

beforeAll(async () => {
  const server = new McpServer({ name: 'gateway', version: '1', logger: quiet, validateResults: true })
    .tool({ name: 'deploy', description: 'relays one question per round' }, (_args, { ask }) =>
      relay(ask, false),
    )
    .tool({ name: 'deploy_batched', description: 'relays two questions at once' }, (_args, { ask }) =>
      relay(ask, true),
    )
    .tool({ name: 'sign_in_only', description: 'relays a URL-mode request' }, async (_args, { ask }) => {
      const answer = await ask.forward(SIGN_IN);
      return text(`sign-in: ${answer.action}`);
    })
    .tool(
      { name: 'malformed', description: 'relays what is not an InputRequest' },
      async (_args, { ask }) => {
        const notARequest = {
          method: 'elicitation/create',
          params: { message: 'no schema' },
        } as unknown as InputRequest;
        const refusal = await ask
          .forward(notARequest)
          .catch((error: { code: string; message: string }) => error);
        return text('code' in refusal ? `${refusal.code}: ${refusal.message}` : 'relayed');
      },
    );
  endpoint = await server.listen({ port: 0 });
});
afterAll(() => endpoint.close());

const textOf = (reply: { response: { result?: Record<string, unknown> } }) =>
  ((reply.response.result?.content ?? []) as Array<{ text: string }>)[0]?.text;

describe('a gateway flow relays an upstream’s questions after its own consent', () => {
  it('asks consent, then the upstream’s form, then its URL request, each under the flow’s own key', async () => {
    formSeen.length = 0;
    const run = await drive(endpoint.url, 'tools/call', { name: 'deploy', arguments: {} }, ({ key }) =>
      key === 'q1'
        ? accept({ confirm: true })
        : key === 'q2'
          ? accept({ env: 'staging', replicas: 2 })
          : { action: 'accept' },
    );
    expect(textOf(run.reply)).toBe('upstream deployed 2 to staging (sign-in: accept)');
    // The third round asked only the URL request: the form's answer came from the sealed journal, not a second asking.
    expect(run.asked.map((a) => [a.round, a.key, a.request.params.mode ?? 'form'])).toEqual([
      [1, 'q1', 'form'],
      [2, 'q2', 'form'],
      [3, 'q3', 'url'],
    ]);
    const [consent, form, signIn] = run.asked.map((a) => a.request);
    expect(consent?.params._meta).toEqual({ 'dev.mrtr/humanRequired': 'consent' });
    // The upstream's text as it wrote it; its claim of mrtr's hint dropped.
    expect(form).toEqual({ method: 'elicitation/create', params: { ...ENV_FORM.params, _meta: undefined } });
    expect(form?.params).not.toHaveProperty('_meta');
    expect(signIn).toEqual(SIGN_IN);
    // The third request answered the form, the fourth replayed it from the journal: the same value both times.
    const answered = { action: 'accept', content: { env: 'staging', replicas: 2 } };
    expect(formSeen).toEqual([answered, answered]);
  });

  it('sends two relayed questions in one round and maps each answer back to the upstream’s key', async () => {
    const run = await drive(
      endpoint.url,
      'tools/call',
      { name: 'deploy_batched', arguments: {} },
      ({ key }) =>
        key === 'q1'
          ? accept({ confirm: true })
          : key === 'q2'
            ? accept({ env: 'production' })
            : { action: 'decline' },
    );
    expect(textOf(run.reply)).toBe('upstream deployed 1 to production (sign-in: decline)');
    expect(run.asked.map((a) => [a.round, a.key])).toEqual([
      [1, 'q1'],
      [2, 'q2'],
      [2, 'q3'],
    ]);
    expect(run.rounds).toBe(3);
  });

  it('asks an invalid answer again, naming what was wrong, and relays the valid one', async () => {
    const answers = [accept({ env: 'staging', replicas: 9 }), accept({ env: 'staging', replicas: 3 })];
    const run = await drive(
      endpoint.url,
      'tools/call',
      { name: 'deploy', arguments: {} },
      ({ key, round }) =>
        key === 'q1' ? accept({ confirm: true }) : key === 'q2' ? answers[round - 2] : { action: 'accept' },
    );
    expect(textOf(run.reply)).toBe('upstream deployed 3 to staging (sign-in: accept)');
    const asked = run.asked.filter((a) => a.key === 'q2').map((a) => a.request.params.message);
    expect(asked).toEqual([
      'Deploy to which environment?',
      'Deploy to which environment?\n(Your previous answer was not valid: replicas must be <= 5)',
    ]);
  });

  it('ends with the upstream’s decline relayed as an answer, not as the end of the flow', async () => {
    const run = await drive(endpoint.url, 'tools/call', { name: 'deploy', arguments: {} }, ({ key }) =>
      key === 'q1' ? accept({ confirm: true }) : { action: 'decline' },
    );
    expect(textOf(run.reply)).toBe('upstream: decline');
  });
});

describe('what ask.forward refuses', () => {
  it('fails a kind the client did not declare with -32021, as every other question does', async () => {
    const formOnly = { ...META, 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } };
    const reply = await mcp(
      endpoint.url,
      'tools/call',
      { name: 'sign_in_only', arguments: {} },
      { meta: formOnly },
    );
    expect(reply.response.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: { url: {} } } },
    });
    const declared = await mcp(endpoint.url, 'tools/call', { name: 'sign_in_only', arguments: {} });
    expect(Object.values(declared.response.result?.inputRequests as object)).toEqual([SIGN_IN]);
  });

  it('refuses a request that is not a valid InputRequest with a FlowUsageError naming what is missing', async () => {
    const reply = await mcp(endpoint.url, 'tools/call', { name: 'malformed', arguments: {} });
    expect(textOf(reply)).toBe(
      "ERR_FLOW_USAGE: ask.forward: not a valid elicitation/create (form mode) request: params (root) must have required property 'requestedSchema'",
    );
  });
});
