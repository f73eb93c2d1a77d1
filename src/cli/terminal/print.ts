// The only place `mrtr call` and `mrtr tools` write to their streams. Everything meant for a terminal must be
// SafeText (made by the client's one sanitizer), so a server's bytes cannot reach the screen unfiltered.
import type { SafeText } from '../../client/index.js';

/** Our own colour around safe text (SGR `code`), or the text alone when colour is off. */
export function paint(color: boolean, code: number, text: SafeText): SafeText {
  return color ? (`\x1b[${code}m${text}\x1b[0m` as SafeText) : text;
}

/** Write text for a terminal as is (a spinner frame, a prompt). */
export function writeSafe(stream: NodeJS.WritableStream, text: SafeText): void {
  stream.write(text);
}

/** Write one line for a terminal. */
export function printLine(stream: NodeJS.WritableStream, line: SafeText): void {
  stream.write(`${line}\n`);
}

/**
 * Write a result to a pipe or a file, byte for byte: it is data for another program, not text for a screen. Callers
 * use it only when the stream is not a TTY.
 */
export function writeData(stream: NodeJS.WritableStream & { isTTY?: boolean }, data: string): void {
  // Internal assertion: every caller checks isTTY first and prints quoted text to a terminal instead.
  if (stream.isTTY) throw new TypeError('writeData is for pipes and files, not terminals');
  stream.write(data);
}

/** Our own fixed text (usage), never built from anything a server or a user sent. */
export function printUsage(stream: NodeJS.WritableStream, usage: string): void {
  stream.write(usage);
}

/**
 * What a usage mistake shows: the synopsis (the usage's first paragraph) and where the rest is, then the mistake
 * itself last, where the eye lands — not under thirty lines of options.
 */
export function printUsageError(
  stream: NodeJS.WritableStream,
  usage: string,
  help: string,
  mistake: SafeText,
): void {
  const synopsis = usage.split('\n\n')[0] ?? usage;
  stream.write(`${synopsis.trimEnd()}\n  (${help} shows every option)\n`);
  printLine(stream, mistake);
}

// Characters JSON.stringify leaves raw that a terminal may act on or hide (C1 controls, bidi and zero-width).
const JSON_UNSAFE = /[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu;

/** One line of JSON (from JSON.stringify). On a terminal, risky characters become \u escapes: still the same JSON. */
export function printJson(stream: NodeJS.WritableStream & { isTTY?: boolean }, json: string): void {
  const text = stream.isTTY
    ? json.replace(JSON_UNSAFE, (c) =>
        [...Array(c.length).keys()]
          .map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`)
          .join(''),
      )
    : json;
  stream.write(`${text}\n`);
}
