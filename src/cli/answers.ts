// `--answers` for `mrtr call`: a map from input key to answer, read the way people write it ("yes", "17", a
// choice's title), answering only the questions it names, and telling what did not fit or was never asked.
import {
  type InputQuestion,
  type InputResolver,
  type ScriptedAnswer,
  scriptedResolver,
} from '../client/index.js';
import { type FormField, parseTyped, readForm } from '../client/internal.js';
import {
  type ElicitResult,
  emptyRecord,
  type InputResponse,
  isJsonObject,
  type JsonObject,
  ownValue,
} from '../protocol/index.js';

type Content = NonNullable<ElicitResult['content']>;

/** A string given for a yes/no, number or choice field, read as a person would type it ("no", "17", "Duplicate"). */
function coerce(
  field: FormField,
  value: unknown,
): { ok: true; value: unknown } | { ok: false; problem: string } {
  if (typeof value !== 'string' || field.type === 'string' || field.type === 'json')
    return { ok: true, value };
  const parsed = parseTyped({ ...field, default: undefined, required: true } as FormField, value);
  return parsed.ok
    ? { ok: true, value: parsed.value }
    : { ok: false, problem: `${field.label}: ${parsed.message}` };
}

function fillForm(
  q: InputQuestion,
  value: unknown,
  report: (problem: string) => void,
): InputResponse | undefined {
  const fields = readForm((q.request.params as JsonObject).requestedSchema as JsonObject);
  let given: JsonObject;
  if (isJsonObject(value)) given = value;
  else if (fields.length === 1 && fields[0] && value !== null) {
    given = emptyRecord();
    given[fields[0].name] = value as never;
  } else {
    report(
      fields.length === 0
        ? 'this form has no fields: answer {} (or "decline")'
        : `a bare value fills a one-field form; this one has ${fields.map((f) => f.name).join(', ')}: give {"field": value}`,
    );
    return undefined;
  }
  // Keyed by the server's field names, which may be `__proto__`.
  const content = emptyRecord<Content[string]>();
  for (const [name, v] of Object.entries(given)) content[name] = v as Content[string];
  for (const field of fields) {
    const v = ownValue(given, field.name);
    if (v === undefined) continue;
    const c = coerce(field, v);
    if (!c.ok) {
      report(c.problem);
      return undefined;
    }
    content[field.name] = c.value as Content[string];
  }
  return { action: 'accept', content };
}

/** Turn one --answers entry into an answer for whatever question comes with that key. */
export function answerFromCli(value: unknown, report: (problem: string) => void = () => {}): ScriptedAnswer {
  return (q: InputQuestion): InputResponse | undefined => {
    if (q.kind === 'sampling' || q.kind === 'roots')
      return isJsonObject(value) ? (value as unknown as InputResponse) : undefined;
    if (value === 'decline' || value === 'cancel') return { action: value };
    if (q.kind === 'elicitation.url')
      return value === true || value === 'accept' ? { action: 'accept' } : undefined;
    if (isJsonObject(value) && (value.action === 'decline' || value.action === 'cancel'))
      return value as unknown as ElicitResult;
    if (isJsonObject(value) && value.action === 'accept')
      return fillForm(q, isJsonObject(value.content) ? value.content : {}, report);
    return fillForm(q, value, report);
  };
}

export interface CliAnswers {
  resolver: InputResolver;
  /** Keys of --answers that no question asked for. */
  unused(asked: ReadonlySet<string>): string[];
  /** Keys whose answer did not fit its question, with the problem. */
  readonly invalid: ReadonlyMap<string, string>;
}

/**
 * The scripted resolver behind --answers. It answers only the questions it names: a yes/no question it does not
 * name is not confirmed for the person ("Type yes to transfer $10,000" gets no silent yes).
 */
export function cliAnswers(
  answers: JsonObject,
  onInvalid: (key: string, problem: string) => void,
): CliAnswers {
  const invalid = new Map<string, string>();
  const note = (key: string, problem: string) => {
    if (invalid.get(key) === problem) return;
    invalid.set(key, problem);
    onInvalid(key, problem);
  };
  // Input keys are the server's: an answer to a question keyed `__proto__` must stay an answer.
  const map = emptyRecord<ScriptedAnswer>();
  for (const [k, v] of Object.entries(answers)) map[k] = answerFromCli(v, (problem) => note(k, problem));
  const resolver = scriptedResolver(map, { validate: true, onInvalid: note });
  return {
    resolver,
    invalid,
    unused: (asked) => Object.keys(answers).filter((k) => !asked.has(k)),
  };
}
