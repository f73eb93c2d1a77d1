// The examples of docs/architecture.md's "Guards that ask" and "The round as one unit": a policy that asks for
// consent without the tool knowing, and a round run by something that is not the dispatcher. They run as they are;
// test/docs/examples-run.test.ts calls them.
// #region guard-asks
import { McpServer, type RoundGuard, text } from 'mrtr/server';

/** Every call to a tool whose name starts with `delete_` needs the caller's yes, asked by policy, not by the tool. */
const deleteNeedsConsent: RoundGuard = {
  name: 'delete-needs-consent',
  async ask(round, ctx) {
    if (!round.target.startsWith('delete_')) return;
    const yes = await ctx.ask.confirm(`Allow ${round.target} with ${JSON.stringify(round.arguments)}?`, {
      key: 'policy_consent',
      humanRequired: 'consent',
    });
    if (!yes) return { content: [{ type: 'text', text: 'Not done: no consent' }], isError: true };
  },
};

export const server = new McpServer({
  name: 'policy',
  version: '1.0.0',
  rounds: { guards: [deleteNeedsConsent] },
}).tool(
  { name: 'delete_report', description: 'Deletes the report' },
  () => text('deleted'), // knows nothing of the consent round before it
);

// #endregion

// #region runner
import type { JsonRpcRequest } from 'mrtr/protocol';
import { RoundRunner, SealedStateCodec } from 'mrtr/server';
import { createEphemeralKeyring } from 'mrtr/state';

const rounds = new RoundRunner({
  codec: new SealedStateCodec({ keyring: createEphemeralKeyring(), audience: 'my-gateway' }),
  guards: [deleteNeedsConsent],
  observers: [{ observe: (e) => console.log(e.target, e.round, e.outcome) }],
});

/** Answer one tools/call whose tool lives elsewhere: every guard, observer and the sealed state still apply. */
export function answerCall(request: JsonRpcRequest, signal: AbortSignal) {
  const env = { principal: undefined, signal, notify() {} };
  return rounds.run(request, env, {
    target: String(request.params?.name),
    invoke: async () => text(`upstream did ${String(request.params?.name)}`),
  });
}
// #endregion
