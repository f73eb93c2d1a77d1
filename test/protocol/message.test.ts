// One rule for what a JSON-RPC message is (src/protocol/message.ts), read by the server (from clients) and the
// client (from servers). The server's and the client's copies used to differ; the cases marked "was" pin the
// stricter reading each side now shares.
import { describe, expect, it } from 'vitest';
import { classifyMessage, errorResponse } from '../../src/protocol/index.js';

const reasonOf = (value: unknown) => {
  const m = classifyMessage(value);
  return m.kind === 'invalid' ? m.reason : `not invalid: ${m.kind}`;
};

describe('classifyMessage', () => {
  it('tells a request, a notification, a result and an error apart, returning the value itself (no copy)', () => {
    const request = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    const notification = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } };
    const result = { jsonrpc: '2.0', id: 'a', result: {} };
    const error = { jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'no', data: 1 } };
    expect(classifyMessage(request)).toEqual({ kind: 'request', request });
    expect((classifyMessage(request) as { request: unknown }).request).toBe(request);
    expect(classifyMessage(notification)).toEqual({ kind: 'notification', notification });
    expect(classifyMessage(result)).toEqual({ kind: 'response', response: result });
    expect(classifyMessage(error)).toEqual({ kind: 'response', response: error });
  });

  it('refuses what is not one JSON-RPC 2.0 object', () => {
    expect(reasonOf(null)).toBe('expected an object');
    expect(reasonOf('x')).toBe('expected an object');
    expect(reasonOf([{ jsonrpc: '2.0', id: 1, method: 'a' }])).toBe(
      'JSON-RPC batches are not supported; send one message at a time',
    );
    expect(reasonOf({ jsonrpc: '1.0', id: 1, method: 'a' })).toBe('jsonrpc must be "2.0"');
    expect(reasonOf({ jsonrpc: '2.0', id: 1 })).toBe('a message needs a method, a result or an error');
  });

  it('requests and notifications: a non-empty string method, object params, a string or integer id', () => {
    expect(reasonOf({ jsonrpc: '2.0', id: 1, method: 7 })).toBe('method must be a non-empty string');
    expect(reasonOf({ jsonrpc: '2.0', id: 1, method: 'a', params: [1] })).toBe('params must be an object');
    expect(reasonOf({ jsonrpc: '2.0', method: 'a', params: 'x' })).toBe('params must be an object');
    for (const id of [null, true, {}, [1]])
      expect(reasonOf({ jsonrpc: '2.0', id, method: 'a' })).toBe('id must be a string or an integer');
    expect(classifyMessage({ jsonrpc: '2.0', id: '', method: 'a' }).kind).toBe('request');
  });

  it('responses: one of result (an object, with an id) and error (integer code, string message)', () => {
    expect(reasonOf({ jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'x' } })).toBe(
      'a response carries a result or an error, not both',
    );
    expect(reasonOf({ jsonrpc: '2.0', id: 1, result: 5 })).toBe('result must be an object');
    expect(reasonOf({ jsonrpc: '2.0', result: {} })).toBe('response id must be a string or an integer');
    expect(reasonOf({ jsonrpc: '2.0', id: 1, error: { code: 1.5, message: 'x' } })).toBe(
      'error must have an integer code and a string message',
    );
    expect(reasonOf({ jsonrpc: '2.0', id: 1, error: 'bad' })).toBe(
      'error must have an integer code and a string message',
    );
    expect(reasonOf({ jsonrpc: '2.0', id: true, error: { code: 1, message: 'x' } })).toBe(
      'response id must be a string or an integer',
    );
  });

  it('an error for a request whose id could not be read may carry "id": null or no id (JSON-RPC 2.0)', () => {
    expect(classifyMessage({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'x' } }).kind).toBe(
      'response',
    );
    expect(classifyMessage({ jsonrpc: '2.0', error: { code: -32700, message: 'x' } }).kind).toBe('response');
  });

  it('was the client: a fractional id is refused (schema.json RequestId is a string or an integer)', () => {
    expect(reasonOf({ jsonrpc: '2.0', id: 1.5, method: 'a' })).toBe('id must be a string or an integer');
    expect(reasonOf({ jsonrpc: '2.0', id: 1.5, result: {} })).toBe(
      'response id must be a string or an integer',
    );
    expect(reasonOf({ jsonrpc: '2.0', id: 1.5, error: { code: 1, message: 'x' } })).toBe(
      'response id must be a string or an integer',
    );
  });

  it('was the client: an empty method is refused', () => {
    expect(reasonOf({ jsonrpc: '2.0', id: 1, method: '' })).toBe('method must be a non-empty string');
  });

  it('was the client: a message with a method and a result or error is neither request nor response', () => {
    expect(reasonOf({ jsonrpc: '2.0', id: 1, method: 'a', result: {} })).toBe(
      'a message has a method or a result/error, not both',
    );
    expect(reasonOf({ jsonrpc: '2.0', method: 'a', error: { code: 1, message: 'x' } })).toBe(
      'a message has a method or a result/error, not both',
    );
  });

  it('an invalid message keeps its id for the error answer only when the id itself is valid', () => {
    expect(classifyMessage({ jsonrpc: '2.0', id: 'r1', method: 'a', params: 1 })).toMatchObject({ id: 'r1' });
    expect(classifyMessage({ jsonrpc: '1.0', id: 7, method: 'a' })).toMatchObject({ id: 7 });
    expect(classifyMessage({ jsonrpc: '1.0', id: 7.5, method: 'a' })).toMatchObject({ id: undefined });
  });
});

describe('errorResponse', () => {
  it('carries the id when there is one, and data only when given', () => {
    expect(errorResponse(3, -32600, 'bad')).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32600, message: 'bad' },
    });
    expect(errorResponse(undefined, -32700, 'bad', { at: 1 })).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'bad', data: { at: 1 } },
    });
    expect('id' in errorResponse(undefined, -32700, 'bad')).toBe(false);
  });
});
