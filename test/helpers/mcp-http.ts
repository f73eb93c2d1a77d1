// Test client for our server: builds spec-correct requests and checks every message the server sends against the
// official schema, the way the conformance suite's wire check does.
import { request as httpRequest } from 'node:http';
import {
  describeSchemaErrors,
  ERROR_DEFINITION,
  encodeHeaderValue,
  nameHeaderField,
  RESULT_DEFINITION,
  schemaValidator,
} from '../../src/protocol/index.js';

export const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'mrtr-tests', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {
    elicitation: { form: {}, url: {} },
    sampling: {},
    roots: {},
  },
};

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** Send raw bytes with raw headers (for bad-input tests). */
export function rawPost(
  url: string,
  body: string | Buffer,
  headers: Record<string, string>,
  method = 'POST',
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

let nextId = 1;

export interface McpReply {
  status: number;
  headers: RawResponse['headers'];
  contentType: string;
  /** Every JSON-RPC message in the body (one for JSON, several for SSE). */
  messages: Array<Record<string, unknown>>;
  /** The final response message. */
  response: {
    id?: unknown;
    result?: Record<string, unknown>;
    error?: { code: number; message: string; data?: unknown };
  };
}

/** Throws when a message the server sent does not match the official schema. */
export function assertWireValid(method: string, message: Record<string, unknown>): void {
  let definition: string;
  if (typeof message.method === 'string') {
    definition = message.method === 'notifications/progress' ? 'ProgressNotification' : 'JSONRPCNotification';
    if (message.method === 'notifications/message') definition = 'LoggingMessageNotification';
  } else if (message.error) {
    const code = (message.error as { code: number }).code;
    definition = ERROR_DEFINITION[code] ?? 'JSONRPCErrorResponse';
  } else {
    const result = message.result as Record<string, unknown>;
    // A task (the tasks extension's CreateTaskResult, tasks/get's DetailedTask) has no definition in schema.json.
    definition =
      result?.resultType === 'input_required'
        ? 'InputRequiredResult'
        : result?.resultType === 'task'
          ? 'Result'
          : (RESULT_DEFINITION[method] ?? 'Result');
    const validate = schemaValidator(definition);
    if (!validate(result))
      throw new Error(`${method} result is not a valid ${definition}: ${describeSchemaErrors(validate)}`);
    definition = 'JSONRPCResultResponse';
  }
  const validate = schemaValidator(definition);
  if (!validate(message))
    throw new Error(`message is not a valid ${definition}: ${describeSchemaErrors(validate)}`);
}

export interface CallOptions {
  meta?: Record<string, unknown>;
  headers?: Record<string, string>;
  id?: string | number;
}

/** A spec-correct request: `_meta`, MCP-Protocol-Version, Mcp-Method and Mcp-Name headers. */
export async function mcp(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  options: CallOptions = {},
): Promise<McpReply> {
  const id = options.id ?? nextId++;
  const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...META, ...options.meta } } };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
  };
  const field = nameHeaderField(method);
  const name = field === undefined ? undefined : params[field];
  if (typeof name === 'string') headers['mcp-name'] = encodeHeaderValue(name);
  Object.assign(headers, options.headers);
  const raw = await rawPost(url, JSON.stringify(body), headers);
  return parseReply(method, raw);
}

export function parseReply(method: string, raw: RawResponse): McpReply {
  const contentType = String(raw.headers['content-type'] ?? '');
  let messages: Array<Record<string, unknown>>;
  if (contentType.startsWith('text/event-stream')) {
    messages = raw.text
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
  } else {
    messages = raw.text === '' ? [] : [JSON.parse(raw.text) as Record<string, unknown>];
  }
  for (const m of messages) assertWireValid(method, m);
  const response = (messages.at(-1) ?? {}) as McpReply['response'];
  return { status: raw.status, headers: raw.headers, contentType, messages, response };
}

export const accept = (content: Record<string, unknown>) => ({ action: 'accept', content });
