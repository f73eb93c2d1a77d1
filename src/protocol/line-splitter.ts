// Newline-delimited framing for stdio (basic/transports/stdio.mdx), server and client alike, with a hard cap per line.
// node:readline keeps a line in memory until its newline arrives, however long it grows; this splitter never holds
// more than the cap of any one line.
import { InvalidOptionError } from './mrtr-error.js';

export interface LineHandlers {
  /** One line, without its LF or CRLF; blank lines carry no message and are not passed on. */
  line(text: string): void;
  /** A line passed the cap: reported once, as soon as it does; the rest of it, up to its newline, is discarded. */
  overflow(): void;
}

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export class LineSplitter {
  #parts: Buffer[] = [];
  #size = 0;
  #skipping = false;

  constructor(
    private readonly maxLineBytes: number,
    private readonly handlers: LineHandlers,
  ) {
    // NaN or Infinity would compare false with every size: no cap at all, silently.
    if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < 1)
      throw new InvalidOptionError(
        `maxLineBytes must be an integer from 1 to ${Number.MAX_SAFE_INTEGER}, got ${String(maxLineBytes)}`,
      );
  }

  /** Bytes of the current, unfinished line held in memory (at most the cap plus one byte for a CR); for tests. */
  get bufferedBytes(): number {
    return this.#size;
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      // Splitting bytes on 0x0a is safe for UTF-8: no multi-byte sequence contains that byte.
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline < 0 ? chunk.length : newline;
      this.#take(chunk.subarray(start, end));
      if (newline < 0) return;
      this.#finishLine();
      start = newline + 1;
    }
  }

  /** The input ended: a last line without a newline still counts. */
  end(): void {
    if (this.#size > 0) this.#finishLine();
    this.#skipping = false;
  }

  #take(piece: Buffer): void {
    if (this.#skipping || piece.length === 0) return;
    // One byte of slack for the CR of a CRLF ending, which is not part of the line; #finishLine checks exactly.
    if (this.#size + piece.length > this.maxLineBytes + 1) {
      this.#overflow();
      return;
    }
    this.#parts.push(piece);
    this.#size += piece.length;
  }

  #finishLine(): void {
    if (this.#skipping) {
      this.#skipping = false;
      return;
    }
    let line = this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts, this.#size);
    this.#parts = [];
    this.#size = 0;
    if (line.length > 0 && line[line.length - 1] === CARRIAGE_RETURN) line = line.subarray(0, -1);
    if (line.length > this.maxLineBytes) {
      this.handlers.overflow();
      return;
    }
    const text = line.toString('utf8');
    if (text.trim() !== '') this.handlers.line(text);
  }

  #overflow(): void {
    this.#parts = [];
    this.#size = 0;
    this.#skipping = true;
    this.handlers.overflow();
  }
}
