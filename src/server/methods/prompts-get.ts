// prompts/get: check the required arguments, then run the prompt through the round pipeline.
import { invalidParams, type Result } from '../../protocol/index.js';
import type { MaybePromise } from '../maybe-async.js';
import { RoundRequest } from '../round/pipeline.js';
import type { Call, Core } from './method.js';

export function promptsGet(core: Core, call: Call): MaybePromise<Result> {
  const name = call.params.name as string;
  const prompt = core.registry.prompts.get(name);
  if (!prompt) throw invalidParams(`Unknown prompt: ${name}`, { name });
  const args = (call.params.arguments ?? {}) as Record<string, string>;
  for (const arg of prompt.definition.arguments ?? []) {
    if (arg.required && typeof args[arg.name] !== 'string') {
      throw invalidParams(`Invalid params: prompt ${name} requires argument "${arg.name}"`);
    }
  }
  return core.pipeline.run(
    new RoundRequest(call, 'prompts/get', name, args, prompt.mrtr, (ctx) => prompt.handler(args, ctx)),
  );
}
