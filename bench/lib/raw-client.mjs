// A lean keep-alive HTTP/1.1 client on raw `net` sockets, used as the default
// load generator so that the generator (which shares the machine's cores with
// the server under test) costs as little CPU per request as possible.
// node:http's client costs ~2x more per request, which caps a bare responder
// well below what it can serve (see bench/README.md). Every response it
// returns is still fully parsed and checked by the caller.
//
// Supports exactly what the bench needs: POST with a string body; responses
// framed by Content-Length, chunked transfer-encoding, or connection close
// (SSE); `Connection: close` from the server; one request in flight per
// connection (closed loop), up to `maxSockets` connections.
import net from 'node:net';

const CRLFCRLF = Buffer.from('\r\n\r\n');

class Conn {
  constructor(host, port) {
    this.host = host;
    this.port = port;
    this.socket = null;
    this.pending = null; // { resolve, reject, timer }
    this.reset();
  }

  reset() {
    this.buf = null; // unparsed bytes
    this.head = null; // { status, headers, contentType, length, chunked, close }
    this.bodyParts = [];
    this.bodyLen = 0;
    this.chunkLeft = -1; // chunked: bytes left in the current chunk (-1 = expect size line)
  }

  connect() {
    const s = net.connect({ host: this.host, port: this.port, noDelay: true });
    s.setNoDelay(true);
    s.on('data', (d) => this.onData(d));
    const onGone = (err) => {
      if (this.socket !== s) return;
      this.socket = null;
      if (this.pending) {
        if (this.head && !this.head.chunked && this.head.length < 0) {
          this.finish(); // close-delimited body ends with the connection
        } else {
          this.fail(err ?? new Error('connection closed before the response completed'));
        }
      }
    };
    s.on('error', (e) => onGone(e));
    s.on('close', () => onGone());
    this.socket = s;
  }

  request(head, body, timeoutMs) {
    if (!this.socket || this.socket.destroyed) this.connect();
    this.reset();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(new Error(`timeout after ${timeoutMs} ms`));
        this.socket?.destroy();
      }, timeoutMs);
      this.pending = { resolve, reject, timer };
      this.socket.write(head + body);
    });
  }

  fail(err) {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    clearTimeout(p.timer);
    this.socket?.destroy();
    this.socket = null;
    p.reject(err);
  }

  finish() {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    clearTimeout(p.timer);
    const text = Buffer.concat(this.bodyParts, this.bodyLen).toString('utf8');
    const { status, contentType, close } = this.head;
    if (close) {
      this.socket?.destroy();
      this.socket = null;
    }
    p.resolve({ status, contentType, text });
  }

  onData(d) {
    if (!this.pending) return; // unsolicited bytes: ignore
    let buf = this.buf ? Buffer.concat([this.buf, d]) : d;
    this.buf = null;
    try {
      if (!this.head) {
        const end = buf.indexOf(CRLFCRLF);
        if (end < 0) {
          this.buf = buf;
          return;
        }
        const lines = buf.toString('latin1', 0, end).split('\r\n');
        const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
        if (!m) throw new Error(`bad status line: ${lines[0]}`);
        const status = Number(m[1]);
        buf = buf.subarray(end + 4);
        if (status >= 100 && status < 200) {
          // interim response: skip it and keep parsing
          return buf.length ? this.onData(buf) : undefined;
        }
        let length = -1;
        let chunked = false;
        let close = false;
        let contentType = '';
        for (let i = 1; i < lines.length; i++) {
          const c = lines[i].indexOf(':');
          if (c < 0) continue;
          const name = lines[i].slice(0, c).trim().toLowerCase();
          const value = lines[i].slice(c + 1).trim();
          if (name === 'content-length') length = Number(value);
          else if (name === 'transfer-encoding') chunked = value.toLowerCase().includes('chunked');
          else if (name === 'connection') close = value.toLowerCase().includes('close');
          else if (name === 'content-type') contentType = value;
        }
        if (chunked) length = -1;
        if (!chunked && length < 0 && (status === 204 || status === 304)) length = 0;
        this.head = { status, contentType, length, chunked, close };
      }
      const h = this.head;
      if (h.chunked) {
        this.readChunks(buf);
      } else {
        if (buf.length) {
          this.bodyParts.push(buf);
          this.bodyLen += buf.length;
        }
        if (h.length >= 0 && this.bodyLen >= h.length) {
          if (this.bodyLen > h.length) {
            // keep exactly `length` bytes (a well-behaved server sends no more)
            const all = Buffer.concat(this.bodyParts, this.bodyLen);
            this.bodyParts = [all.subarray(0, h.length)];
            this.bodyLen = h.length;
          }
          this.finish();
        }
      }
    } catch (e) {
      this.fail(e);
    }
  }

  // Chunked transfer-encoding state machine. `chunkLeft`:
  //   -1 = expecting a chunk-size line, >0 = bytes of chunk data still due,
  //    0 = chunk data done, expecting its CRLF, -2 = last chunk seen, expecting
  //   the (empty) trailer's final CRLF.
  readChunks(buf) {
    let off = 0;
    for (;;) {
      if (this.chunkLeft === -1 || this.chunkLeft === -2) {
        const eol = buf.indexOf('\r\n', off);
        if (eol < 0) break;
        const line = buf.toString('latin1', off, eol);
        off = eol + 2;
        if (this.chunkLeft === -2) {
          if (line === '') return this.finish(); // end of trailer section
          continue; // a trailer field: ignore
        }
        const size = Number.parseInt(line.split(';')[0], 16);
        if (!Number.isFinite(size) || size < 0)
          throw new Error(`bad chunk size line: ${JSON.stringify(line)}`);
        this.chunkLeft = size === 0 ? -2 : size;
      } else if (this.chunkLeft > 0) {
        const take = Math.min(this.chunkLeft, buf.length - off);
        if (take <= 0) break;
        this.bodyParts.push(buf.subarray(off, off + take));
        this.bodyLen += take;
        off += take;
        this.chunkLeft -= take;
      } else {
        // chunkLeft === 0: the CRLF after chunk data
        if (buf.length - off < 2) break;
        off += 2;
        this.chunkLeft = -1;
      }
    }
    this.buf = off < buf.length ? buf.subarray(off) : null;
  }
}

/**
 * @param {string} url         endpoint, e.g. http://127.0.0.1:1234/mcp
 * @param {number} maxSockets  connection pool size
 */
export function createRawClient(url, maxSockets) {
  const u = new URL(url);
  if (u.protocol !== 'http:') throw new Error('raw client: http only');
  const host = u.hostname;
  const port = Number(u.port || 80);
  const reqLine = `POST ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nConnection: keep-alive\r\n`;
  const idle = [];
  const all = [];
  const waiters = [];
  const headCache = new WeakMap();

  const acquire = () => {
    if (idle.length) return Promise.resolve(idle.pop());
    if (all.length < maxSockets) {
      const c = new Conn(host, port);
      all.push(c);
      return Promise.resolve(c);
    }
    return new Promise((r) => waiters.push(r));
  };
  const release = (c) => {
    const w = waiters.shift();
    if (w) w(c);
    else idle.push(c);
  };

  function headerBlock(headers) {
    let s = headCache.get(headers);
    if (s === undefined) {
      s = '';
      for (const [k, v] of Object.entries(headers)) s += `${k}: ${v}\r\n`;
      headCache.set(headers, s);
    }
    return s;
  }

  async function post(headers, body, timeoutMs = 30_000) {
    const c = await acquire();
    try {
      const head = `${reqLine}${headerBlock(headers)}content-length: ${Buffer.byteLength(body)}\r\n\r\n`;
      return await c.request(head, body, timeoutMs);
    } finally {
      release(c);
    }
  }

  function close() {
    for (const c of all) c.socket?.destroy();
  }
  return { post, close };
}
