// The round loop's source for MRTR rounds: every round sends the call's own params, frozen when the call began, plus
// that round's answers and the requestState exactly as the server sent it, and reads the answer as one step.
import type { InputResponses, JsonObject, Result } from '../protocol/index.js';
import type { DriverOptions, DriverTarget } from './driver.js';
import { ProtocolViolation } from './errors.js';
import type { InBandQuestions } from './in-band-questions.js';
import { parseInputRequired } from './input.js';
import type { LoopContext, Step } from './loop-steps.js';
import { roundParams } from './round-params.js';
import { sendWithRetries } from './round-retry.js';
import { readTask } from './task-shape.js';

export interface MrtrRoundsOptions {
  retry: DriverOptions['retry'];
  maxQuestions: number;
  /** Answers a 2025 server's questions inside each round's request. */
  inBand: InBandQuestions;
}

export function mrtrRounds<R extends Result>(
  target: DriverTarget,
  loop: LoopContext,
  { retry, maxQuestions, inBand }: MrtrRoundsOptions,
): { first(): Promise<Step<R>> } {
  // Frozen in time: a caller changing its params object mid-call changes no round.
  const base = structuredClone(target.params);

  const read = (response: Awaited<ReturnType<DriverTarget['send']>>): Step<R> => {
    if ('error' in response) return { kind: 'end', end: { status: 'server_error', error: response.error } };
    const result = response.result as JsonObject;
    const resultType = result.resultType;
    // basic/index.mdx: an absent resultType means "complete"; an unrecognised one is invalid.
    if (resultType === undefined || resultType === 'complete')
      return { kind: 'end', end: { status: 'complete', result: result as unknown as R } };
    if (resultType === 'task') {
      // tasks.md: a task in answer to a method that cannot be one, or to a client that did not declare the
      // extension, is an invalid response.
      if (!target.tasks)
        throw new ProtocolViolation(
          `the server answered ${target.method} with a task, which this call did not offer to follow (the tasks extension is declared only on tools/call, and not with tasks: false)`,
        );
      const created = readTask(result, 'the CreateTaskResult');
      return { kind: 'task', taskId: created.taskId, seed: created };
    }
    if (resultType !== 'input_required')
      throw new ProtocolViolation(
        `unknown resultType ${JSON.stringify(resultType)} in answer to ${target.method}`,
      );
    const asked = parseInputRequired(result, target.declared, maxQuestions);
    return {
      kind: 'ask',
      questions: asked.questions,
      retryAfterMs: asked.retryAfterMs,
      // The state goes back exactly as received, with this call's fresh answers only.
      reply: (answers) => send(answers, asked.requestState),
    };
  };

  const send = async (
    inputResponses: InputResponses | undefined,
    requestState: string | undefined,
  ): Promise<Step<R>> => {
    const round = loop.startRound(target.method);
    const params = roundParams(base, inputResponses, requestState);
    const once = () =>
      inBand.send(loop.signal, (signal, onServerRequest) =>
        target.send(
          params,
          signal,
          (notification) => loop.emit({ type: 'notification', round, notification }),
          onServerRequest,
        ),
      );
    const response = retry ? await sendWithRetries(once, retry, loop.signal, round, loop.emit) : await once();
    return read(response);
  };

  return { first: () => send(undefined, undefined) };
}
