// The `ask` object a handler awaits: each call is one question (or one step) at a deterministic position.
import { z } from 'zod';
import {
  type ClientCapabilities,
  type CreateMessageRequest,
  type CreateMessageResult,
  type ElicitResult,
  emptyRecord,
  type InputRequest,
  type JsonObject,
  type ListRootsResult,
  META_HUMAN_REQUIRED,
  META_PROGRESS,
  MrtrError,
} from '../protocol/index.js';
import { FlowUsageError } from './errors.js';
import { type ElicitationForm, elicitationForm, type FormSchema } from './forms.js';
import { type ForwardedResponse, type ForwardOptions, forwardedQuestion } from './forward.js';
import type { FlowInputKind, Question, QuestionOptions } from './question.js';

export type { FlowInputKind, Question, QuestionOptions } from './question.js';

/** A form: a zod object schema, or one converted ahead of time with elicitationForm(). */
export type FormInput<T> = ElicitationForm<T> | z.ZodType<T>;

/** What happened to a form question. */
export type Elicited<T> = { action: 'accept'; content: T } | { action: 'decline' } | { action: 'cancel' };

/** Ends the call early with a message, e.g. when the user declines. Tools answer it as an isError result. */
export class FlowEnded extends MrtrError {
  declare readonly code: 'ERR_FLOW_ENDED';
  constructor(
    message: string,
    readonly reason: 'declined' | 'cancelled' | 'invalid_answers' | 'ended',
  ) {
    super('ERR_FLOW_ENDED', message);
    this.name = 'FlowEnded';
  }
}

/** The engine behind `ask`: answers a question from the journal or parks it for the next round. */
export interface QuestionResolver {
  resolve(question: Question): Promise<unknown>;
  step<T>(name: string, run: () => T | Promise<T>): Promise<T>;
  capabilities: ClientCapabilities;
}

export interface Ask {
  /** Ask for a form; resolves to the validated content. Decline or cancel ends the call ("declined by the user"). */
  form<T>(message: string, schema: ElicitationForm<T>, options?: QuestionOptions): Promise<T>;
  form<S extends FormSchema>(message: string, schema: S, options?: QuestionOptions): Promise<z.output<S>>;
  /** Like form(), but decline and cancel come back as typed outcomes the handler decides about. */
  elicit<T>(message: string, schema: ElicitationForm<T>, options?: QuestionOptions): Promise<Elicited<T>>;
  elicit<S extends FormSchema>(
    message: string,
    schema: S,
    options?: QuestionOptions,
  ): Promise<Elicited<z.output<S>>>;
  /** A yes/no question: true only when the person accepts and ticks yes; decline means no; cancel ends the call. */
  confirm(message: string, options?: QuestionOptions): Promise<boolean>;
  /** Choose one of a list. */
  choose<T extends string>(message: string, choices: readonly T[], options?: QuestionOptions): Promise<T>;
  /** Free text. */
  text(
    message: string,
    options?: QuestionOptions & {
      minLength?: number;
      maxLength?: number;
      format?: 'email' | 'uri' | 'date' | 'date-time';
    },
  ): Promise<string>;
  /** Send the person to a URL (URL-mode elicitation); resolves when they report completion. Needs elicitation.url. */
  url(message: string, url: string, options?: QuestionOptions): Promise<void>;
  /** Ask the client's model (sampling/createMessage). Needs the sampling capability. */
  sample(params: CreateMessageRequest['params'], options?: QuestionOptions): Promise<CreateMessageResult>;
  /** Ask for the client's roots. Needs the roots capability. */
  roots(options?: QuestionOptions): Promise<ListRootsResult['roots']>;
  /**
   * Relay a question this flow did not write — an upstream server's InputRequest, as it sent it — to the caller,
   * under this flow's own key (`q<position>` or `key`); the upstream's key stays the forwarding code's, to map the
   * answer back. Resolves to the caller's answer for that kind (an ElicitResult, decline and cancel included; a
   * CreateMessageResult; a ListRootsResult), checked and journaled like any question. A request that is not a valid
   * InputRequest, or is too large, is refused with a FlowUsageError.
   */
  forward<R extends InputRequest>(request: R, options?: ForwardOptions): Promise<ForwardedResponse<R>>;
  /** Ask several independent questions in one round: `await ask.all([ask.text(...), ask.confirm(...)])`. */
  all<T extends readonly unknown[]>(questions: [...{ [K in keyof T]: Promise<T[K]> }]): Promise<T>;
  /** Run a side effect once per flow and journal its (JSON) result; later rounds get the journaled value. */
  step<T>(name: string, run: () => T | Promise<T>): Promise<T>;
  /** True when the client declared this kind of input request for this request. */
  supports(kind: FlowInputKind): boolean;
}

function withHint(params: JsonObject, options: QuestionOptions): JsonObject {
  if (!options.humanRequired && options.progress === undefined) return params;
  const meta: JsonObject = { ...(params._meta as JsonObject | undefined) };
  if (options.humanRequired) meta[META_HUMAN_REQUIRED] = options.humanRequired;
  if (options.progress !== undefined) meta[META_PROGRESS] = options.progress;
  return { ...params, _meta: meta };
}

function formQuestion<T>(message: string, form: ElicitationForm<T>, options: QuestionOptions): Question {
  return {
    kind: 'elicitation.form',
    request: {
      method: 'elicitation/create',
      params: withHint({ mode: 'form', message, requestedSchema: form.requestedSchema }, options),
    } as InputRequest,
    options,
    accept(response) {
      const r = response as ElicitResult;
      if (r.action !== 'accept') return { value: { action: r.action } };
      const parsed = form.parse(r.content);
      return parsed.ok ? { value: { action: 'accept', content: parsed.value } } : { invalid: parsed.message };
    },
    journaled(response) {
      const r = response as ElicitResult;
      if (r.action !== 'accept' || !r.content) return { action: r.action };
      const content = emptyRecord<unknown>();
      for (const field of Object.keys(form.requestedSchema.properties)) {
        if (Object.hasOwn(r.content, field)) content[field] = r.content[field];
      }
      return { action: 'accept', content };
    },
  };
}

const asForm = <T>(schema: FormInput<T>): ElicitationForm<T> =>
  'requestedSchema' in schema
    ? schema
    : (elicitationForm(schema as unknown as FormSchema) as ElicitationForm<T>);

export function createAsk(resolver: QuestionResolver, supports: (kind: FlowInputKind) => boolean): Ask {
  const elicit = <T>(message: string, form: ElicitationForm<T>, options: QuestionOptions = {}) =>
    resolver.resolve(formQuestion(message, form, options)) as Promise<Elicited<T>>;
  const contentOrEnd = async <T>(outcome: Promise<Elicited<T>>): Promise<T> => {
    const o = await outcome;
    if (o.action === 'accept') return o.content;
    throw new FlowEnded(
      o.action === 'decline' ? 'declined by the user' : 'cancelled by the user',
      o.action === 'decline' ? 'declined' : 'cancelled',
    );
  };

  const ask: Ask = {
    form: ((message: string, schema: FormInput<unknown>, options?: QuestionOptions) =>
      contentOrEnd(elicit(message, asForm(schema), options))) as Ask['form'],
    elicit: ((message: string, schema: FormInput<unknown>, options?: QuestionOptions) =>
      elicit(message, asForm(schema), options)) as Ask['elicit'],
    async confirm(message, options) {
      const o = await elicit(message, CONFIRM_FORM, options);
      if (o.action === 'cancel') throw new FlowEnded('cancelled by the user', 'cancelled');
      return o.action === 'accept' && o.content.confirm === true;
    },
    choose: (message, choices, options) =>
      contentOrEnd(elicit(message, chooseForm(choices), options)).then(
        (c) => c.choice as (typeof choices)[number],
      ),
    text: (message, options = {}) =>
      contentOrEnd(elicit(message, textForm(options), options)).then((c) => c.text),
    async url(message, url, options = {}) {
      const outcome = (await resolver.resolve({
        kind: 'elicitation.url',
        request: {
          method: 'elicitation/create',
          params: withHint({ mode: 'url', message, url }, options),
        } as InputRequest,
        options,
        accept: (response) => ({ value: { action: (response as ElicitResult).action } }),
        journaled: (response) => ({ action: (response as ElicitResult).action }),
      })) as { action: string };
      if (outcome.action !== 'accept') {
        throw new FlowEnded(
          outcome.action === 'decline' ? 'declined by the user' : 'cancelled by the user',
          outcome.action === 'decline' ? 'declined' : 'cancelled',
        );
      }
    },
    sample: (params, options = {}) =>
      resolver.resolve({
        kind: 'sampling',
        request: { method: 'sampling/createMessage', params: withHint(params, options) } as InputRequest,
        options,
        accept: (response) => ({ value: response }),
        journaled: (response) => {
          const { role, content, model, stopReason } = response as CreateMessageResult;
          return stopReason === undefined ? { role, content, model } : { role, content, model, stopReason };
        },
      }) as Promise<CreateMessageResult>,
    roots: (options = {}) =>
      resolver.resolve({
        kind: 'roots',
        request: { method: 'roots/list', params: withHint({}, options) } as InputRequest,
        options,
        accept: (response) => ({ value: (response as ListRootsResult).roots }),
        journaled: (response) => ({
          roots: (response as ListRootsResult).roots.map(({ uri, name }) =>
            name === undefined ? { uri } : { uri, name },
          ),
        }),
      }) as Promise<ListRootsResult['roots']>,
    forward(request, options = {}) {
      let question: Question;
      try {
        question = forwardedQuestion(request, options);
      } catch (error) {
        // Refused before it takes a position, so the refusal is the same on every round.
        return Promise.reject(error);
      }
      return resolver.resolve(question) as Promise<never>;
    },
    all: (questions) => Promise.all(questions) as never,
    step: (name, run) => resolver.step(name, run),
    supports,
  };
  return ask;
}

// Built-in forms, converted once.

const CONFIRM_FORM = elicitationForm(z.object({ confirm: z.boolean().describe('Yes or no') }));
const chooseForms = new Map<string, ElicitationForm<{ choice: string }>>();
function chooseForm(choices: readonly string[]): ElicitationForm<{ choice: string }> {
  const id = JSON.stringify(choices);
  let form = chooseForms.get(id);
  if (!form) {
    if (choices.length === 0) throw new FlowUsageError('ask.choose needs at least one choice');
    form = elicitationForm(z.object({ choice: z.enum(choices as [string, ...string[]]) }));
    if (chooseForms.size < 1000) chooseForms.set(id, form);
  }
  return form;
}
function textForm(o: {
  minLength?: number;
  maxLength?: number;
  format?: string;
}): ElicitationForm<{ text: string }> {
  let s = z.string();
  if (o.minLength !== undefined) s = s.min(o.minLength);
  if (o.maxLength !== undefined) s = s.max(o.maxLength);
  if (o.format === 'email') s = s.email();
  if (o.format === 'uri') s = s.url();
  return elicitationForm(z.object({ text: s }));
}
