// completion/complete: suggestions for a prompt's or a resource template's argument.
import { invalidParams, type JsonObject, type Result, withoutPrototypes } from '../../protocol/index.js';
import { Deadline } from '../deadline.js';
import type { HandlerOptions } from '../registry.js';
import { timedOutAnswer } from '../round/pipeline.js';
import type { Call, Core } from './method.js';

type Completer = (value: string, ctx: Record<string, string>) => unknown;

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
  // A completer runs under its prompt's or template's time limit, like the handler it completes for.
  let owner: { mrtr: HandlerOptions };
  if (ref.type === 'ref/prompt') {
    const prompt = core.registry.prompts.get(ref.name ?? '');
    if (!prompt) throw invalidParams(`Unknown prompt: ${ref.name}`);
    completer = prompt.completions.get(argument.name);
    owner = prompt;
  } else if (ref.type === 'ref/resource') {
    const template = core.registry.templates.find((t) => t.definition.uriTemplate === ref.uri);
    if (!template) throw invalidParams(`Unknown resource template: ${ref.uri}`);
    completer = template.completions.get(argument.name);
    owner = template;
  } else {
    throw invalidParams(`Invalid params: unknown completion reference type ${String(ref.type)}`);
  }
  // A completer sees what its prompt or template is about: it needs the same scopes as the handler it completes for.
  const requiredScopes = owner.mrtr.requiredScopes;
  if (requiredScopes?.length && core.scopeGuard?.screen) {
    await core.scopeGuard.screen({
      requestId: call.request.id,
      method: ref.type === 'ref/prompt' ? 'prompts/get' : 'resources/read',
      target: ref.name ?? ref.uri ?? '',
      principal: call.env.principal,
      requiredScopes,
    });
  }
  const suggested = completer ? completer(argument.value, context) : { values: [] };
  const timeoutMs = owner.mrtr.timeoutMs ?? core.handlerTimeoutMs;
  const found = (
    suggested instanceof Promise
      ? await new Deadline(timeoutMs).race(suggested, () =>
          timedOutAnswer(
            'completion/complete',
            `completion of ${argument.name}`,
            timeoutMs,
            call.request,
            call.env,
            core.logger,
          ),
        )
      : suggested
  ) as { values: string[]; total?: number; hasMore?: boolean };
  const completion: JsonObject = { values: found.values.slice(0, 100) };
  if (found.total !== undefined) completion.total = found.total;
  if (found.hasMore !== undefined || found.values.length > 100) completion.hasMore = found.hasMore ?? true;
  return { resultType: 'complete', completion };
}
