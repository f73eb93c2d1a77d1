// prompts/get: check the required arguments, then run the prompt through the round pipeline.
import { invalidParams, type Result, withoutPrototypes } from '../../protocol/index.js';
import type { PromptEntry } from '../catalog/entries.js';
import type { MaybePromise } from '../maybe-async.js';
import { isObjectMemberName } from '../schema-input.js';
import type { Call, Core } from './method.js';

export function promptsGet(core: Core, call: Call): MaybePromise<Result> {
  const name = call.params.name as string;
  const found = core.catalog.findPrompt(name, call.env);
  return found instanceof Promise
    ? found.then((prompt) => getPrompt(core, call, name, prompt))
    : getPrompt(core, call, name, found);
}

/** A prompt hidden from this caller is not found either: the same error as for an unknown name. */
function getPrompt(
  core: Core,
  call: Call,
  name: string,
  prompt: PromptEntry | undefined,
): MaybePromise<Result> {
  if (!prompt) throw invalidParams(`Unknown prompt: ${name}`, { name });
  const args = (call.params.arguments ?? {}) as Record<string, string>;
  const declared = prompt.definition.arguments ?? [];
  for (const arg of declared) {
    if (arg.required && !(Object.hasOwn(args, arg.name) && typeof args[arg.name] === 'string')) {
      throw invalidParams(`Invalid params: prompt ${name} requires argument "${arg.name}"`);
    }
  }
  // An optional argument named like an Object member (toString, constructor) that the client left out is absent
  // to the handler, not Object.prototype's function.
  const handlerArgs = declared.some((a) => isObjectMemberName(a.name))
    ? (withoutPrototypes(args, 1) as Record<string, string>)
    : args;
  return core.rounds.round(call, 'prompts/get', {
    target: name,
    arguments: args,
    options: prompt.mrtr,
    invoke: (ctx) => prompt.handler(handlerArgs, ctx),
  });
}
