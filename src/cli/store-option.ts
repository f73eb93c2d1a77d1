// `--store` on `mrtr serve`: open the shared store that turns on the replay guard, and say at start-up whether
// replays are blocked, so nobody runs without it by accident.
import { openStore, type SharedStore, STORE_SYNTAX } from '../stores/index.js';

export const STORE_HELP = `--store ${STORE_SYNTAX}`;

/** The store named by `--store`, or undefined without one; a message naming the problem on a bad spec. */
export async function storeFromFlag(
  spec: string | undefined,
  say: (line: string) => void,
): Promise<{ store: SharedStore | undefined } | { error: string }> {
  if (spec === undefined) {
    say(
      'mrtr serve: replays are not blocked: no --store, so a requestState can be presented again (give --store sqlite:PATH, or redis://HOST:PORT/DB for a fleet)',
    );
    return { store: undefined };
  }
  let store: SharedStore;
  try {
    store = await openStore(spec, { readyWithinMs: 3000 });
  } catch (error) {
    return { error: `invalid --store: ${(error as Error).message}` };
  }
  const ready = (store as { isReady?: boolean }).isReady;
  say(
    ready === false
      ? `mrtr serve: replay guard on ${store.description}, which is not reachable yet: guarded rounds fail closed until it is`
      : `mrtr serve: replay guard on ${store.description}: each requestState is single-use`,
  );
  return { store };
}
