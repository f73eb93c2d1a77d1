// Incremental Server-Sent Events parser (WHATWG "event stream interpretation"), fed decoded text chunks.
// Hand-written: it is ~60 lines, and we need a hard size bound and "ended mid-event" detection that the
// general-purpose parsers do not offer.
import { ProtocolViolation } from './errors.js';

export interface SseEvent {
  event: string;
  data: string;
  id: string | undefined;
}

export class SseParser {
  /** Pieces of the line not yet ended: joined once, when its end arrives (never rescanned). */
  private partial: string[] = [];
  private partialChars = 0;
  private data: string[] = [];
  /** Characters held in `data`, kept as a running total so that each chunk costs only its own length. */
  private dataChars = 0;
  private event = '';
  private id: string | undefined;
  private pendingCr = false;
  /** The server's `retry:` advice in milliseconds (legacy streams reconnect after it). */
  retryMs: number | undefined;
  /** The last event id seen (legacy streams resume from it with Last-Event-ID). */
  lastEventId: string | undefined;
  private readonly maxEventChars: number;
  private readonly onEvent: (event: SseEvent) => void;

  constructor(onEvent: (event: SseEvent) => void, maxEventChars = 16 * 1024 * 1024) {
    this.onEvent = onEvent;
    this.maxEventChars = maxEventChars;
  }

  /** True when the stream stopped inside an event (data seen but no blank line dispatched it). */
  get midEvent(): boolean {
    return this.data.length > 0 || this.partialChars > 0;
  }

  /** Feed one chunk. Work is linear in the chunk's length: only the new text is scanned. */
  push(chunk: string): void {
    let start = 0;
    // A CR at the end of the previous chunk may be the first half of a CRLF pair.
    if (this.pendingCr) {
      this.pendingCr = false;
      if (chunk.charCodeAt(0) === 10) start = 1;
    }
    for (let i = start; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const piece = chunk.slice(start, i);
      let line = piece;
      if (this.partial.length > 0) {
        this.partial.push(piece);
        line = this.partial.join('');
        this.partial = [];
        this.partialChars = 0;
      }
      this.line(line);
      if (c === 13) {
        if (i + 1 < chunk.length) {
          if (chunk.charCodeAt(i + 1) === 10) i++;
        } else {
          this.pendingCr = true;
        }
      }
      start = i + 1;
    }
    if (start < chunk.length) {
      this.partial.push(chunk.slice(start));
      this.partialChars += chunk.length - start;
    }
    if (this.partialChars + this.dataChars > this.maxEventChars)
      throw new ProtocolViolation(`SSE event larger than ${this.maxEventChars} characters`);
  }

  private line(line: string): void {
    if (line === '') {
      // WHATWG: an event whose data is empty is not dispatched (legacy servers send such "priming" events).
      const data = this.data.join('\n');
      if (data !== '') this.onEvent({ event: this.event || 'message', data, id: this.id });
      this.data = [];
      this.dataChars = 0;
      this.event = '';
      return;
    }
    if (line.startsWith(':')) return; // comment / keep-alive
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        this.dataChars += value.length + 1;
        if (this.dataChars > this.maxEventChars)
          throw new ProtocolViolation(`SSE event larger than ${this.maxEventChars} characters`);
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\0')) {
          this.id = value;
          this.lastEventId = value;
        }
        break;
      case 'retry':
        // Only legacy (2025) streams resume; 2026-07-28 streams are not resumable and ignore it.
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break;
    }
  }
}
