// The tools the official conformance suite's 2025-11-25 and 2025-06-18 server scenarios call (tools-call-with-logging,
// -sampling, -elicitation, SEP-1034 defaults, SEP-1330 enums). They are ordinary MRTR handlers: a 2025 client meets
// their questions as server-to-client requests through the legacy bridge, a 2026 client as input_required.
import type { CreateMessageResult, ElicitFormRequest, ElicitResult } from '../../protocol/index.js';
import { inputRequired, type McpServer, text } from '../../server/index.js';

const elicit = (
  message: string,
  requestedSchema: ElicitFormRequest['params']['requestedSchema'],
): ElicitFormRequest => ({
  method: 'elicitation/create',
  params: { mode: 'form', message, requestedSchema },
});

const describeElicited = (r: unknown): string => {
  const e = r as ElicitResult;
  return `action=${e.action}, content=${JSON.stringify(e.content ?? {})}`;
};

const SEP1034_SCHEMA: ElicitFormRequest['params']['requestedSchema'] = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'User name', default: 'John Doe' },
    age: { type: 'integer', description: 'User age', default: 30 },
    score: { type: 'number', description: 'User score', default: 95.5 },
    status: {
      type: 'string',
      description: 'User status',
      enum: ['active', 'inactive', 'pending'],
      default: 'active',
    },
    verified: { type: 'boolean', description: 'Verification status', default: true },
  },
};

const SEP1330_SCHEMA: ElicitFormRequest['params']['requestedSchema'] = {
  type: 'object',
  properties: {
    untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    titledSingle: {
      type: 'string',
      oneOf: [
        { const: 'value1', title: 'First Option' },
        { const: 'value2', title: 'Second Option' },
        { const: 'value3', title: 'Third Option' },
      ],
    },
    legacyEnum: {
      type: 'string',
      enum: ['opt1', 'opt2', 'opt3'],
      enumNames: ['Option One', 'Option Two', 'Option Three'],
    },
    untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
    titledMulti: {
      type: 'array',
      items: {
        anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
          { const: 'value3', title: 'Third Choice' },
        ],
      },
    },
  },
};

export function addLegacyScenarioTools(server: McpServer): McpServer {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  return server
    .tool(
      {
        name: 'test_reconnection',
        description: 'Runs long enough for its SSE stream to be closed mid-call and resumed (SSE polling)',
      },
      async () => {
        await sleep(400);
        return text('Reconnection test completed');
      },
    )
    .tool(
      { name: 'test_tool_with_logging', description: 'Logs three messages while it runs' },
      async (_args, ctx) => {
        ctx.log('info', 'Tool execution started');
        await sleep(50);
        ctx.log('info', 'Tool processing data');
        await sleep(50);
        ctx.log('info', 'Tool execution completed');
        return text('Tool with logging executed successfully');
      },
    )
    .tool(
      {
        name: 'test_sampling',
        description: "Asks the client's model to answer a prompt",
        input: {
          type: 'object',
          properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } },
          required: ['prompt'],
        },
      },
      (args, ctx) => {
        const answer = ctx.inputResponses.sample as CreateMessageResult | undefined;
        if (!answer)
          return inputRequired({
            inputRequests: {
              sample: {
                method: 'sampling/createMessage',
                params: {
                  messages: [{ role: 'user', content: { type: 'text', text: String(args.prompt) } }],
                  maxTokens: 100,
                },
              },
            },
          });
        const content = answer.content as { type?: string; text?: string };
        return text(`LLM response: ${content?.type === 'text' ? content.text : '(no text)'}`);
      },
    )
    .tool(
      {
        name: 'test_elicitation',
        description: 'Asks the user for a username and an email address',
        input: {
          type: 'object',
          properties: { message: { type: 'string', description: 'The message to show the user' } },
          required: ['message'],
        },
      },
      (args, ctx) => {
        const answer = ctx.inputResponses.user;
        if (!answer)
          return inputRequired({
            inputRequests: {
              user: elicit(String(args.message), {
                type: 'object' as const,
                properties: {
                  username: { type: 'string', description: "User's response" },
                  email: { type: 'string', description: "User's email address" },
                },
                required: ['username', 'email'],
              }),
            },
          });
        return text(`User response: ${describeElicited(answer)}`);
      },
    )
    .tool(
      { name: 'test_elicitation_sep1034_defaults', description: 'Elicits a form whose fields have defaults' },
      (_args, ctx) => {
        const answer = ctx.inputResponses.defaults;
        if (!answer)
          return inputRequired({
            inputRequests: { defaults: elicit('Please review your profile', SEP1034_SCHEMA) },
          });
        return text(`Elicitation completed: ${describeElicited(answer)}`);
      },
    )
    .tool(
      { name: 'test_elicitation_sep1330_enums', description: 'Elicits every kind of enum field' },
      (_args, ctx) => {
        const answer = ctx.inputResponses.enums;
        if (!answer)
          return inputRequired({
            inputRequests: { enums: elicit('Please choose your options', SEP1330_SCHEMA) },
          });
        return text(`Elicitation completed: ${describeElicited(answer)}`);
      },
    );
}
