// The one-round example of docs/client.md: what a gateway does for each round its caller makes — one round upstream,
// and the raw result back. The calls sit in a function, so importing this file contacts no server.
// #region round
import { McpClient } from 'mrtr/client';
// #endregion
import type { InputRequests, InputResponses, JsonObject, Result } from 'mrtr/protocol';

/** Calls `name` for Alice, putting each round's questions to `askAlice` (a gateway relays them to its caller). */
export async function callForAlice(
  url: string,
  name: string,
  args: JsonObject,
  askAlice: (asked: InputRequests) => Promise<InputResponses>,
): Promise<Result> {
  // #region round
  const upstream = new McpClient({ server: url, capabilities: { elicitation: { form: {} } } });
  const params = { name, arguments: args };
  let round = await upstream.round('tools/call', params, { holder: 'alice' });
  // Each pass is one round of Alice's: round() itself answers nothing and never retries.
  while (round.resultType === 'input_required') {
    const inputResponses = await askAlice(round.inputRequests ?? {});
    round = await upstream.round('tools/call', params, {
      holder: 'alice', // a 2025 server's held call answers to its holder only
      requestState: round.requestState, // byte for byte: a 2026 server's state, or the held call's handle
      inputResponses,
    });
  }
  // #endregion
  await upstream.close();
  return round;
}
