// A prompts/get or resources/read through the gateway: the upstream is asked one round at a time, each round an
// ask.step (journaled in the gateway's sealed state, never sent twice), and its questions go to the caller with
// ask.forward, as a tool call's do (forward-call.ts). A failure is a JSON-RPC error naming the upstream.
import { RemoteError, type RoundResult, TransportFailure } from '../client/index.js';
import { ErrorCode, type InputRequest, type JsonObject, McpError } from '../protocol/index.js';
import type { RequestContext } from '../server/index.js';
import { MAX_UPSTREAM_ROUNDS } from './forward-call.js';

type Reply =
  | { kind: 'complete'; result: JsonObject }
  | { kind: 'asked'; inputRequests: Record<string, InputRequest>; requestState: string | undefined }
  | { kind: 'failed'; message: string };

/** One upstream round: the previous round's state and the caller's answers in, the upstream's answer out. */
export type SurfaceSend = (
  requestState: string | undefined,
  inputResponses: JsonObject | undefined,
) => Promise<RoundResult>;

/** The upstream's final result of `what` (e.g. `prompt review on docs`), its questions relayed on the way. */
export async function relaySurface(
  ctx: RequestContext,
  upstream: string,
  what: string,
  send: SurfaceSend,
): Promise<JsonObject> {
  let requestState: string | undefined;
  let inputResponses: JsonObject | undefined;
  for (let n = 1; n <= MAX_UPSTREAM_ROUNDS; n++) {
    const reply = await ctx.ask.step(`mrtr/gateway/upstream-${n}`, async (): Promise<Reply> => {
      try {
        const answer = await send(requestState, inputResponses);
        if (answer.resultType === 'input_required')
          return {
            kind: 'asked',
            inputRequests: answer.inputRequests as Record<string, InputRequest>,
            requestState: answer.requestState,
          };
        return { kind: 'complete', result: answer as unknown as JsonObject };
      } catch (error) {
        // The operator's log has a dead upstream's detail; the caller hears that it is unavailable.
        if (error instanceof TransportFailure && error.code === 'ERR_TRANSPORT')
          return { kind: 'failed', message: `upstream ${upstream} is unavailable; try again` };
        const why = error instanceof RemoteError ? error.message : (error as Error).message;
        return { kind: 'failed', message: `upstream ${upstream} failed on ${what}: ${why}` };
      }
    });
    if (reply.kind === 'failed') throw new McpError(ErrorCode.InternalError, reply.message);
    if (reply.kind === 'complete') {
      const { resultType: _type, ...result } = reply.result;
      return result;
    }
    const keys = Object.keys(reply.inputRequests);
    const answers = await ctx.ask.all(
      keys.map((key) => ctx.ask.forward(reply.inputRequests[key] as InputRequest)),
    );
    inputResponses = Object.fromEntries(keys.map((key, i) => [key, answers[i]])) as JsonObject;
    requestState = reply.requestState;
  }
  throw new McpError(
    ErrorCode.InternalError,
    `upstream ${upstream} asked more than ${MAX_UPSTREAM_ROUNDS} rounds of questions on ${what}`,
  );
}
