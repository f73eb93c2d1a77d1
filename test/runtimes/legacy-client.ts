// A 2025-era client on a runtime: the official SDK's v1 Client (protocol 2025-11-25, sessions, elicitation as a
// server-to-client request) through mrtr's bridge, behind the same JWT auth.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** Connects, calls greet answering its question with `name`, and closes; resolves with the greeting and the version. */
export async function greetAs2025Client(
  url: string,
  token: string,
  name: string,
): Promise<{ text: string; protocolVersion: string | undefined; asked: string[] }> {
  const client = new Client({ name: 'sdk-v1', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  const asked: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    return { action: 'accept', content: { text: name } };
  });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  try {
    const result = await client.callTool({ name: 'greet', arguments: {} });
    const text = (result.content as Array<{ text: string }>)[0]!.text;
    return { text, protocolVersion: transport.protocolVersion, asked };
  } finally {
    await client.close();
  }
}
