// completion/complete: suggestions for a prompt's or a resource template's argument. A completer is author code that
// sees what its prompt or template is about, so it passes the same screening as the handler it completes for —
// every guard's `screen` (requiredScopes' 403, a refusal limit's 429), under the same principal, method and target —
// and runs under the same time limit. It is not observed (docs/architecture.md, "Completions"): it has no state, no
// answers and no effect, and a client asks one per keystroke. A prompt or template the catalog hides from this caller
// is not found: the answer is the one for an unknown name.
import { invalidParams, type JsonObject, type Result, withoutPrototypes } from '../../protocol/index.js';
import { Deadline } from '../deadline.js';
import { handlerContractError } from '../errors.js';
import type { HandlerOptions } from '../handlers.js';
import { isThenable } from '../maybe-async.js';
import type { ScreenedRound } from '../round/guard.js';
import { screenRound } from '../round/guard-calls.js';
import { timedOutAnswer } from '../round/timed-out.js';
import type { Call, Core } from './method.js';

type Completer = (value: string, ctx: Record<string, string>) => unknown;
interface Completion {
  values: string[];
  total?: number;
  hasMore?: boolean;
}

const NO_SCOPES: readonly string[] = Object.freeze([]);
const EMPTY: Completion = Object.freeze({ values: [] }) as Completion;

/** What a completer returned, checked: a wrong shape is the author's bug, named in the log, not a crash mid-answer. */
function checked(found: unknown, what: string): Completion {
  const f = found as Partial<Completion> | null | undefined;
  if (
    typeof f !== 'object' ||
    f === null ||
    !Array.isArray(f.values) ||
    !f.values.every((v) => typeof v === 'string') ||
    (f.total !== undefined && !Number.isInteger(f.total)) ||
    (f.hasMore !== undefined && typeof f.hasMore !== 'boolean')
  )
    throw handlerContractError(
      `the completer of ${what} returned ${JSON.stringify(found) ?? String(found)}: expected { values: string[], total?: integer, hasMore?: boolean }`,
    );
  return f as Completion;
}

export async function completionComplete(core: Core, call: Call): Promise<Result> {
  const { params } = call;
  const ref = params.ref as { type: string; name?: string; uri?: string };
  const argument = params.argument as { name: string; value: string };
  // Names the client chose: an argument it did not fill in (say `toString`) is absent to the completer, not
  // Object.prototype's function. One level: the values are strings.
  const context = withoutPrototypes((params.context as JsonObject | undefined)?.arguments ?? {}, 1) as Record<
    string,
    string
  >;
  let completer: Completer | undefined;
  let owner: { mrtr: HandlerOptions };
  let screened: ScreenedRound;
  const base = { requestId: call.request.id, principal: call.env.principal };
  if (ref.type === 'ref/prompt') {
    const prompt = await core.catalog.findPrompt(ref.name ?? '', call.env);
    if (!prompt) throw invalidParams(`Unknown prompt: ${ref.name}`);
    completer = prompt.completions.get(argument.name);
    owner = prompt;
    screened = { ...base, method: 'prompts/get', target: prompt.definition.name, requiredScopes: NO_SCOPES };
  } else if (ref.type === 'ref/resource') {
    const template = await core.catalog.findResourceTemplate(ref.uri ?? '', call.env);
    if (!template) throw invalidParams(`Unknown resource template: ${ref.uri}`);
    completer = template.completions.get(argument.name);
    owner = template;
    screened = {
      ...base,
      method: 'resources/read',
      target: template.definition.uriTemplate,
      requiredScopes: NO_SCOPES,
    };
  } else {
    throw invalidParams(`Invalid params: unknown completion reference type ${String(ref.type)}`);
  }
  screened = { ...screened, requiredScopes: owner.mrtr.requiredScopes ?? NO_SCOPES };
  // Screened like the round it completes for, before any author code runs; a refusal is logged as the pipeline's is.
  try {
    await screenRound(core.guards, screened, core.hookTimeoutMs);
  } catch (error) {
    const reason = (error as { reason?: unknown }).reason;
    core.logger.warn(
      { method: 'completion/complete', target: screened.target, id: call.request.id, reason },
      'completion refused',
    );
    throw error;
  }
  if (!completer) return answer(EMPTY);
  const what = `${argument.name} of ${screened.target}`;
  // A completer runs under its prompt's or template's time limit, like the handler it completes for. A synchronous
  // one is over before any limit could act (JavaScript cannot stop it), as a synchronous handler's is.
  const suggested = completer(argument.value, context);
  if (!isThenable(suggested)) return answer(checked(suggested, what));
  const timeoutMs = owner.mrtr.timeoutMs ?? core.handlerTimeoutMs;
  const found = await new Deadline(timeoutMs).race(Promise.resolve(suggested), () =>
    timedOutAnswer(
      'completion/complete',
      `completion of ${argument.name}`,
      timeoutMs,
      call.request,
      call.env,
      core.logger,
    ),
  );
  return answer(checked(found, what));
}

function answer(found: Completion): Result {
  const completion: JsonObject = { values: found.values.slice(0, 100) };
  if (found.total !== undefined) completion.total = found.total;
  if (found.hasMore !== undefined || found.values.length > 100) completion.hasMore = found.hasMore ?? true;
  return { resultType: 'complete', completion };
}
