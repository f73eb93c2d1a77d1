// Resolvers answer embedded input requests by kind. The driver picks, for every question, the first resolver that
// handles its kind and accepts it; a question only a person may answer goes only to a resolver with `person: true`.

import {
  type CreateMessageRequest,
  type CreateMessageResult,
  type ElicitResult,
  type InputKind,
  type InputResponse,
  InvalidArgumentError,
  isJsonObject,
  type JsonObject,
  type ListRootsResult,
} from '../protocol/index.js';
import { checkContent, readForm } from './form.js';
import type { InputQuestion } from './input.js';

export interface ResolveContext {
  signal: AbortSignal;
  /** The round being answered: 1 for the questions of the first input_required result. */
  round: number;
  method: string;
  /** The tool or prompt name, or the resource URI. */
  target: string | undefined;
  /** Who is asking, for people: the server's name, else its URL or command. */
  server: string;
  /** Where the server really is (the endpoint's host, or the command): a name is only what the server claims. */
  endpoint?: string;
}

export interface InputResolver {
  readonly name: string;
  /** The kinds this resolver can answer; the client declares the union of its resolvers' kinds. */
  readonly kinds: readonly InputKind[];
  /** True when a person present now gives the answers. Only such resolvers see questions a person must answer. */
  readonly person: boolean;
  /** Whether this resolver will answer this question (checked for every question before any is asked). */
  accepts(question: InputQuestion, ctx: ResolveContext): boolean;
  resolve(question: InputQuestion, ctx: ResolveContext): Promise<InputResponse>;
  /** Release resources (a terminal's readline). */
  close?(): void;
}

// --- scripted ------------------------------------------------------------------------------------------------

export type ScriptedAnswer = InputResponse | ((question: InputQuestion) => InputResponse | undefined);

export interface ScriptedResolverOptions {
  /** Default: form and URL elicitation. */
  kinds?: InputKind[];
  /**
   * Only set this when the map holds a person's own answers, given for this very call: then it may answer questions
   * marked `dev.mrtr/humanRequired` (and URL mode). Default false.
   */
  person?: boolean;
  /** A form with a single boolean field that has no entry in the map is accepted with `true`. Default false. */
  confirmDefault?: boolean;
  /** Check accepted form content against the requested schema; an answer that does not fit is not given. */
  validate?: boolean;
  /** Called when `validate` finds an answer that does not fit its question. */
  onInvalid?: (key: string, problem: string) => void;
  /** Answers questions whose key is not in the map (return undefined to leave them unanswered). */
  fallback?: (question: InputQuestion) => InputResponse | undefined;
}

function isConfirmation(question: InputQuestion): string | undefined {
  if (question.kind !== 'elicitation.form') return undefined;
  const fields = readForm((question.request.params as JsonObject).requestedSchema as JsonObject);
  return fields.length === 1 && fields[0]?.type === 'boolean' ? fields[0].name : undefined;
}

/** Answers from a map of input key → answer (or a function of the question). For tests and automation. */
export function scriptedResolver(
  answers: Record<string, ScriptedAnswer>,
  options: ScriptedResolverOptions = {},
): InputResolver {
  // accepts() and resolve() see the same question object: compute a function answer once.
  const cache = new WeakMap<InputQuestion, InputResponse | undefined>();
  const answerFor = (q: InputQuestion): InputResponse | undefined => {
    if (cache.has(q)) return cache.get(q);
    const a = compute(q);
    cache.set(q, a);
    return a;
  };
  const compute = (q: InputQuestion): InputResponse | undefined => {
    if (Object.hasOwn(answers, q.key)) {
      const a = answers[q.key];
      return typeof a === 'function' ? a(q) : a;
    }
    const f = options.fallback?.(q);
    if (f !== undefined) return f;
    if (options.confirmDefault && !q.personRequired) {
      const field = isConfirmation(q);
      if (field !== undefined) return { action: 'accept', content: { [field]: true } };
    }
    return undefined;
  };
  return {
    name: 'scripted',
    kinds: options.kinds ?? ['elicitation.form', 'elicitation.url'],
    person: options.person ?? false,
    accepts(q) {
      const a = answerFor(q);
      if (a === undefined) return false;
      if (options.validate && q.kind === 'elicitation.form' && (a as ElicitResult).action === 'accept') {
        const fields = readForm((q.request.params as JsonObject).requestedSchema as JsonObject);
        const problem = checkContent(fields, (a as ElicitResult).content ?? {});
        if (problem) {
          options.onInvalid?.(q.key, problem);
          return false;
        }
      }
      return true;
    },
    async resolve(q) {
      const a = answerFor(q);
      if (a === undefined) throw new InvalidArgumentError(`no scripted answer for ${q.key}`);
      return a;
    },
  };
}

// --- agent policy --------------------------------------------------------------------------------------------

export interface PolicyRule {
  /** Which questions the rule answers; every criterion given must match. */
  key?: string | RegExp;
  kind?: InputKind;
  message?: RegExp;
  /** The answer, or a function returning it (undefined: the rule does not answer after all). */
  answer: InputResponse | ((question: InputQuestion) => InputResponse | undefined);
}

export interface AgentPolicyOptions {
  rules: PolicyRule[];
  /** Kinds to declare. Default: the kinds the rules name, and form elicitation for rules that name none. */
  kinds?: InputKind[];
}

/**
 * An agent's policy: answers data questions from rules. It never answers a question a person must answer
 * (`dev.mrtr/humanRequired`: consent, second factor, approval — or any URL-mode elicitation), whatever the rules say.
 */
export function agentPolicyResolver(options: AgentPolicyOptions): InputResolver {
  const matches = (rule: PolicyRule, q: InputQuestion): boolean =>
    (rule.kind === undefined || rule.kind === q.kind) &&
    (rule.key === undefined || (typeof rule.key === 'string' ? rule.key === q.key : rule.key.test(q.key))) &&
    (rule.message === undefined || (q.message !== undefined && rule.message.test(q.message)));
  const answerFor = (q: InputQuestion): InputResponse | undefined => {
    if (q.personRequired !== undefined || q.kind === 'elicitation.url') return undefined;
    for (const rule of options.rules) {
      if (!matches(rule, q)) continue;
      const a = typeof rule.answer === 'function' ? rule.answer(q) : rule.answer;
      if (a !== undefined) return a;
    }
    return undefined;
  };
  const kinds =
    options.kinds ??
    [...new Set(options.rules.map((r) => r.kind ?? 'elicitation.form'))].filter(
      (k) => k !== 'elicitation.url',
    );
  return {
    name: 'agent-policy',
    kinds,
    person: false,
    accepts: (q) => answerFor(q) !== undefined,
    async resolve(q) {
      const a = answerFor(q);
      if (a === undefined) throw new InvalidArgumentError(`agent policy has no answer for ${q.key}`);
      return a;
    },
  };
}

// --- sampling and roots --------------------------------------------------------------------------------------

/** Answer `sampling/createMessage` with your own model call. */
export function samplingResolver(
  sample: (params: CreateMessageRequest['params'], signal: AbortSignal) => Promise<CreateMessageResult>,
): InputResolver {
  return {
    name: 'sampling',
    kinds: ['sampling'],
    person: false,
    accepts: (q) => q.kind === 'sampling' && q.personRequired === undefined,
    resolve: (q, ctx) => sample((q.request as CreateMessageRequest).params, ctx.signal),
  };
}

/** Answer `roots/list` with a fixed list or a function of the moment. */
export function rootsResolver(
  roots: ListRootsResult['roots'] | (() => ListRootsResult['roots']),
): InputResolver {
  return {
    name: 'roots',
    kinds: ['roots'],
    person: false,
    accepts: (q) => q.kind === 'roots' && q.personRequired === undefined,
    async resolve() {
      const list = typeof roots === 'function' ? roots() : roots;
      return { roots: list.map((r) => ({ ...r })) };
    },
  };
}

/** The first resolver that may answer a question, or undefined when none may. */
export function pickResolver(
  resolvers: readonly InputResolver[],
  question: InputQuestion,
  ctx: ResolveContext,
): InputResolver | undefined {
  for (const r of resolvers) {
    if (!r.kinds.includes(question.kind)) continue;
    if (question.personRequired !== undefined && !r.person) continue;
    if (r.accepts(question, ctx)) return r;
  }
  return undefined;
}

export function isElicitResult(v: unknown): v is ElicitResult {
  return isJsonObject(v) && (v.action === 'accept' || v.action === 'decline' || v.action === 'cancel');
}
