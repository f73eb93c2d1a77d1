// The kinds of embedded request an InputRequiredResult may carry, and the client capabilities that declare them
// (mrtr.mdx "InputRequests", elicitation.mdx / sampling.mdx / roots.mdx "Capabilities"). The server reads them to
// decide what it may ask; the client writes them to say what it can answer. One definition keeps both readings equal.
import { isJsonObject } from './json.js';
import type { ClientCapabilities } from './wire.js';

/** Kinds of embedded request a client can declare and answer. */
export type InputKind = 'elicitation.form' | 'elicitation.url' | 'sampling' | 'roots';
export const INPUT_KINDS: readonly InputKind[] = ['elicitation.form', 'elicitation.url', 'sampling', 'roots'];

/**
 * The kind of one input request, or undefined when it is none of the four. An elicitation without `mode` is form
 * mode (ElicitRequestFormParams: `mode?: "form"`); any other mode is not a kind this revision defines.
 */
export function kindOfInputRequest(request: unknown): InputKind | undefined {
  if (!isJsonObject(request)) return undefined;
  switch (request.method) {
    case 'elicitation/create': {
      if (!isJsonObject(request.params)) return undefined;
      const mode = request.params.mode;
      if (mode === undefined || mode === 'form') return 'elicitation.form';
      return mode === 'url' ? 'elicitation.url' : undefined;
    }
    case 'sampling/createMessage':
      return 'sampling';
    case 'roots/list':
      return 'roots';
    default:
      return undefined;
  }
}

/**
 * Whether the capabilities declare an input kind. A capability counts only when its value is an object, as the
 * schema defines it (a stray `true` or `null` declares nothing). An `elicitation` object that declares neither
 * `form` nor `url` means form mode only (elicitation.mdx: `"elicitation": {}` is equivalent to `{ "form": {} }`).
 */
export function clientSupports(caps: ClientCapabilities, kind: InputKind): boolean {
  switch (kind) {
    case 'elicitation.form':
    case 'elicitation.url': {
      const e = caps.elicitation;
      if (!isJsonObject(e)) return false;
      const form = isJsonObject(e.form);
      const url = isJsonObject(e.url);
      return kind === 'elicitation.url' ? url : form || !url;
    }
    case 'sampling':
      return isJsonObject(caps.sampling);
    case 'roots':
      return isJsonObject(caps.roots);
  }
}

/** Every kind the capabilities declare, by the same rule as clientSupports. */
export function declaredKinds(caps: ClientCapabilities): Set<InputKind> {
  return new Set(INPUT_KINDS.filter((kind) => clientSupports(caps, kind)));
}

/**
 * The smallest capabilities that declare exactly these kinds: what a client sends for the kinds it can answer, and
 * the `requiredCapabilities` a server names in a MissingRequiredClientCapability (-32021) error.
 */
export function capabilitiesFor(kinds: Iterable<InputKind>): ClientCapabilities {
  const set = new Set(kinds);
  const caps: ClientCapabilities = {};
  if (set.has('elicitation.form') || set.has('elicitation.url')) {
    caps.elicitation = {};
    if (set.has('elicitation.form')) caps.elicitation.form = {};
    if (set.has('elicitation.url')) caps.elicitation.url = {};
  }
  if (set.has('sampling')) caps.sampling = {};
  if (set.has('roots')) caps.roots = {};
  return caps;
}
