// Incremental Server-Sent Events parser (WHATWG "event stream interpretation"), fed decoded text chunks.
// Hand-written: it is ~60 lines, and we need a hard size bound and "ended mid-event" detection that the
// general-purpose parsers do not offer.

export interface SseEvent {
  event: string;
  data: string;
  id: string | undefined;
}

export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private id: string | undefined;
  private pendingCr = false;
  private readonly maxEventChars: number;
  private readonly onEvent: (event: SseEvent) => void;

  constructor(onEvent: (event: SseEvent) => void, maxEventChars = 16 * 1024 * 1024) {
    this.onEvent = onEvent;
    this.maxEventChars = maxEventChars;
  }

  /** True when the stream stopped inside an event (data seen but no blank line dispatched it). */
  get midEvent(): boolean {
    return this.data.length > 0 || this.buffer.length > 0;
  }

  push(chunk: string): void {
    let text = chunk;
    // A CR at the end of the previous chunk may be the first half of a CRLF pair.
    if (this.pendingCr) {
      this.pendingCr = false;
      if (text.startsWith('\n')) text = text.slice(1);
    }
    this.buffer += text;
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(this.buffer.slice(start, i));
      if (c === 13) {
        if (i + 1 < this.buffer.length) {
          if (this.buffer.charCodeAt(i + 1) === 10) i++;
        } else {
          this.pendingCr = true;
        }
      }
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
    let size = this.buffer.length;
    for (const d of this.data) size += d.length;
    if (size > this.maxEventChars)
      throw new RangeError(`SSE event larger than ${this.maxEventChars} characters`);
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0)
        this.onEvent({ event: this.event || 'message', data: this.data.join('\n'), id: this.id });
      this.data = [];
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
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.id = value;
        break;
      default:
        break; // `retry` and unknown fields are ignored: streams are not resumable in 2026-07-28
    }
  }
}
