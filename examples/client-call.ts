// The first example of docs/client.md: a call answered at the terminal. The call sits in a function, so importing
// this file contacts no server.
// #region call
import { describeOutcome, McpClient, terminalResolver } from 'mrtr/client';

// #endregion

/** Stand-ins for the application around the client. */
const ui = { show: (event: { type: string }) => console.error(event.type) };
const show = (result: unknown) => console.log(result);
const askSomeone = (pending: unknown) => console.error('needs a person:', pending);
const report = (message: string) => console.error(message);

export async function resolveBugAtTheTerminal(controller: AbortController): Promise<void> {
  // #region call
  const client = new McpClient({
    server: 'http://127.0.0.1:3000/mcp', // or new StdioClientTransport({ command, args })
    resolvers: [terminalResolver()], // who answers; the client declares exactly these kinds
  });

  const outcome = await client.callTool(
    'resolve_bug',
    { id: 42 },
    {
      maxRounds: 10, // retries at most (exact): at most 11 requests
      timeoutMs: 300_000, // the whole call, time spent answering included
      signal: controller.signal,
      onEvent: (e) => ui.show(e),
    },
  );

  switch (outcome.status) {
    case 'complete':
      show(outcome.result); // outcome.rounds, outcome.declined
      break;
    case 'needs_person':
      askSomeone(outcome.pending); // questions nobody here may answer
      break;
    default:
      report(describeOutcome(outcome));
  }
  await client.close();
  // #endregion
}
