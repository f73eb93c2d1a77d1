// The one answer every page (step-up, approvals, passkeys, the console) gives when its route threw: a person's
// mistake is named with a 400, a server without sign-in says so with a 404, the server's own fault is a 500 that
// tells the operator, and a response already under way is cut rather than left hanging.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FormError } from '../../src/auth/index.js';
import { ControlsUsageError } from '../../src/controls/errors.js';
import { BodyError } from '../../src/controls/http-bits.js';
import { answerPageFailure } from '../../src/controls/internal.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((done) => s.close(done));
});

async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handle);
  servers.push(server);
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/** Serves one failure with `error`; returns the response and what the operator was told. */
async function failWith(error: unknown, nothingDone?: string) {
  const told: unknown[] = [];
  const url = await serve((_req, res) => answerPageFailure(res, error, (e) => told.push(e), nothingDone));
  const response = await fetch(url);
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    text: await response.text(),
    told,
  };
}

describe('answerPageFailure', () => {
  it('a form the person sent wrong: 400 naming it, and the operator is not bothered', async () => {
    const r = await failWith(new FormError('the field `code` is missing'));
    expect(r.status).toBe(400);
    expect(r.text).toContain('the field `code` is missing');
    expect(r.told).toEqual([]);
  });

  it('a JSON body the person sent wrong: 400 as JSON, the way the API answers', async () => {
    const r = await failWith(new BodyError('the body is not JSON'));
    expect(r.status).toBe(400);
    expect(r.type).toBe('application/json');
    expect(JSON.parse(r.text)).toEqual({ error: 'bad_request', message: 'the body is not JSON' });
    expect(r.told).toEqual([]);
  });

  it('a server started without sign-in: 404 saying the pages need it', async () => {
    const r = await failWith(new ControlsUsageError('no sign-in'));
    expect(r.status).toBe(404);
    expect(r.text).toContain('need browser sign-in');
    expect(r.told).toEqual([]);
  });

  it('the server’s own fault: 500 saying nothing was done, the error handed to the operator, not shown', async () => {
    const fault = new Error('store down at 10.0.0.7');
    const r = await failWith(fault);
    expect(r.status).toBe(500);
    expect(r.text).toContain('Nothing was recorded. Try again.');
    expect(r.text).not.toContain('10.0.0.7');
    expect(r.told).toEqual([fault]);
    expect((await failWith(fault, 'Nothing was changed.')).text).toContain('Nothing was changed. Try again.');
  });

  it('a response already under way is cut, not left open', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<p>half a page');
      answerPageFailure(res, new Error('failed mid-page'), () => undefined);
    });
    await expect(fetch(url).then((r) => r.text())).rejects.toThrow();
  });
});
