// The handler behind every upstream tool: call the upstream with the arguments the controls passed, and relay the
// upstream's own questions to the caller. Once the upstream asks, each of its rounds is an ask.step, so its answer —
// the upstream's requestState included — is journaled inside the gateway's sealed state: bound to this caller, this
// exact request (the upstream, the tool, the arguments) and a short expiry. A caller cannot carry it to another user,
// upstream or call, and the upstream is never called twice for the same round. Its questions go to the caller with
// ask.forward under the gateway's own keys, checked by kind, and their answers go back under the upstream's keys.
import { RemoteError, TransportFailure } from '../client/index.js';
import type { InputRequest, JsonObject } from '../protocol/index.js';
import type { RequestContext, ToolHandler, ToolResult } from '../server/index.js';
import { inClientSpan } from '../server/internal.js';
import { argumentsDigest } from '../state/index.js';
import type { GatewayTool } from './catalog.js';
import { egressCallerOf } from './catalog.js';
import { isUnauthorized, type UpstreamConnect, UpstreamRefusedToken } from './connect-upstream.js';
import { holderOf } from './holder.js';
import { idempotencyMeta } from './idempotency-key.js';
import type { UpstreamRoundEvent } from './observer.js';

/** The most upstream rounds one call may take (each asks the caller once): past it the call ends. */
export const MAX_UPSTREAM_ROUNDS = 20;

type UpstreamReply =
  | { kind: 'complete'; result: JsonObject }
  | { kind: 'asked'; inputRequests: Record<string, InputRequest>; requestState: string | undefined }
  | { kind: 'failed'; message: string };

const failure = (message: string): ToolResult => ({
  content: [{ type: 'text', text: message }],
  isError: true,
});

/** `args` arrive prepared (the entry's prepareArguments, applied once by tools/call): sent exactly as judged. */
export function forwardingHandler(
  tokenOf: (principal: object | undefined) => string | undefined,
  /** Told of each round sent upstream (metrics); not of rounds answered from the flow's journal. */
  observe: (event: UpstreamRoundEvent) => void = () => {},
  /** The connections of an upstream that needs each person's account (`credentials: type: oauth`), else undefined. */
  connectOf: (upstream: string) => UpstreamConnect | undefined = () => undefined,
) {
  return (tool: Omit<GatewayTool, 'entry'>): ToolHandler<JsonObject> =>
    async (args: JsonObject, ctx: RequestContext) => {
      const caller = egressCallerOf(ctx, tokenOf);
      const connect = connectOf(tool.upstream.name);
      // The policy and every control ran in the policy link before this handler: only then is the person asked.
      if (connect) await connect.ready(ctx);
      let requestState: string | undefined;
      let inputResponses: JsonObject | undefined;
      const started = Date.now();
      const upstreamRound = async (n: number): Promise<UpstreamReply> => {
        const sent = performance.now();
        const told = (failed: boolean) =>
          observe({
            upstream: tool.upstream.name,
            tool: tool.tool,
            durationMs: performance.now() - sent,
            failed,
          });
        try {
          // The same key on a round run again (its instance died mid-call): an upstream that keeps it runs once.
          const params = { name: tool.tool, arguments: args, _meta: idempotencyMeta(ctx.flowId, n) };
          // A client span of the gateway's round: its traceparent goes upstream with the request.
          const answer = await inClientSpan(
            `tools/call ${tool.tool}`,
            {
              'mcp.method.name': 'tools/call',
              'gen_ai.tool.name': tool.tool,
              'gen_ai.operation.name': 'execute_tool',
              'mrtr.upstream': tool.upstream.name,
              'mrtr.upstream.round': n,
            },
            () =>
              tool.upstream.round(caller, params, {
                requestState,
                inputResponses,
                holder: holderOf(ctx),
                signal: ctx.signal,
              }),
          );
          told(false);
          if (answer.resultType === 'input_required')
            return {
              kind: 'asked',
              inputRequests: answer.inputRequests as Record<string, InputRequest>,
              requestState: answer.requestState,
            };
          return { kind: 'complete', result: answer as unknown as JsonObject };
        } catch (error) {
          told(true);
          // Thrown, not answered: a refused round must not be journaled, so it runs again once the person connects.
          if (connect && isUnauthorized(error))
            throw new UpstreamRefusedToken(tool.upstream.name, error.refusedBearer);
          // A dead or unreachable upstream: the operator's log has the detail (its stderr included); the caller
          // hears that it is unavailable, not the upstream's own words about itself.
          if (error instanceof TransportFailure && error.code === 'ERR_TRANSPORT')
            return { kind: 'failed', message: `upstream ${tool.upstream.name} is unavailable; try again` };
          const why = error instanceof RemoteError ? error.message : (error as Error).message;
          return { kind: 'failed', message: `upstream ${tool.upstream.name} failed: ${why}` };
        }
      };
      for (let n = 1; n <= MAX_UPSTREAM_ROUNDS; n++) {
        const step = `mrtr/gateway/upstream-${n}`;
        let reply: UpstreamReply;
        try {
          if (n === 1 && ctx.round === 0) {
            // A flow's first request has no journal to replay and no step ledger: the upstream is called directly,
            // and its reply journaled only when it asks (the next round must not call it again). Later rounds replay.
            reply = await upstreamRound(n);
            const asked = reply;
            if (asked.kind === 'asked') await ctx.ask.step(step, () => asked);
          } else reply = await ctx.ask.step(step, () => upstreamRound(n));
        } catch (error) {
          if (!(connect && error instanceof UpstreamRefusedToken)) throw error;
          // The token is dropped and the person asked to connect again (the round pauses here); a second refusal
          // in this call ends it. Connected meanwhile (another call): the same round is tried again.
          const ended = await connect.refused(ctx, error.refusedBearer);
          if (ended !== '') {
            ctx.audit.note({
              upstream: { name: tool.upstream.name, tool: tool.tool, rounds: n, failed: ended },
            });
            return failure(ended);
          }
          n--;
          continue;
        }
        if (reply.kind === 'failed') {
          ctx.audit.note({
            upstream: { name: tool.upstream.name, tool: tool.tool, rounds: n, failed: reply.message },
          });
          return failure(reply.message);
        }
        if (reply.kind === 'complete') {
          const result = passedOn(reply.result);
          const audit = ctx.audit;
          // Hashed only for a trail that keeps it.
          if (audit.recorded)
            audit.note({
              upstream: {
                name: tool.upstream.name,
                tool: tool.tool,
                rounds: n,
                latencyMs: Date.now() - started,
                answerDigest: argumentsDigest(result),
              },
            });
          return result;
        }
        const keys = Object.keys(reply.inputRequests);
        const answers = await ctx.ask.all(
          keys.map((key) => ctx.ask.forward(reply.inputRequests[key] as InputRequest)),
        );
        inputResponses = {};
        keys.forEach((key, i) => {
          (inputResponses as Record<string, unknown>)[key] = answers[i];
        });
        requestState = reply.requestState;
      }
      return failure(
        `upstream ${tool.upstream.name} asked more than ${MAX_UPSTREAM_ROUNDS} rounds of questions`,
      );
    };
}

/** The upstream's result as the gateway passes it on: its content and outcome, not its protocol fields. */
function passedOn(result: JsonObject): ToolResult {
  const out: ToolResult = {
    content: Array.isArray(result.content) ? (result.content as ToolResult['content']) : [],
  };
  if (result.structuredContent !== undefined) out.structuredContent = result.structuredContent as JsonObject;
  if (result.isError === true) out.isError = true;
  return out;
}
