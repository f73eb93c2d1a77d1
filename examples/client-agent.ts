// The agent example of docs/client.md: rules and a model answer what they may, a person the rest. The call sits in
// a function, so importing this file contacts no server.
// #region agent
import { agentPolicyResolver, McpClient, samplingResolver } from 'mrtr/client';
// #endregion
import type { CreateMessageRequest, CreateMessageResult } from 'mrtr/protocol';

/** Stand-ins for the application around the client. */
const notifyOwner = (pending: unknown) => console.error('needs a person:', pending);
const myModel = {
  complete: async (
    params: CreateMessageRequest['params'],
    _signal: AbortSignal,
  ): Promise<CreateMessageResult> => ({
    role: 'assistant',
    content: { type: 'text', text: `(${params.messages.length} messages summarised)` },
    model: 'stand-in',
  }),
};

export async function refundAsAnAgent(url: string): Promise<void> {
  // #region agent
  const agent = new McpClient({
    server: url,
    resolvers: [
      agentPolicyResolver({
        rules: [{ key: 'region', answer: { action: 'accept', content: { region: 'eu-west-1' } } }],
      }),
      samplingResolver((params, signal) => myModel.complete(params, signal)),
    ],
  });
  const outcome = await agent.callTool('refund', { order: 'A-17' });
  if (outcome.status === 'needs_person') notifyOwner(outcome.pending); // e.g. [{ key: 'approve', why: 'approval', … }]
  // #endregion
  await agent.close();
}
