// A person's connection in the audit trail: each event the connections tell (connected, refreshed, disconnected…) is
// an event of its own in the writer's chain, with the person as principal and what happened in notes.connection;
// the chain still verifies, and the OCSF export names the action.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, expect, it } from 'vitest';
import {
  AuditSigner,
  AuditTrail,
  JsonlAuditReader,
  JsonlAuditSink,
  toOcsf,
  verifyReader,
} from '../../src/audit/index.js';
import { tempDir } from './fixture.js';

const tmp = tempDir();
afterAll(() => tmp.remove());

it('connection events are chained events of their own, verifiable, exported to OCSF', async () => {
  const file = join(tmp.dir, 'audit.jsonl');
  const signer = AuditSigner.generate('mrtr-audit-test');
  const trail = await AuditTrail.open(await JsonlAuditSink.open(file), { instance: 'gw-1', key: signer });
  await trail.connectionEvent({
    connection: 'tracker',
    action: 'connected',
    by: 'alice',
    byIssuer: 'https://id.example.com',
    id: 'c1',
    at: '2026-12-07T10:00:00.000Z',
  });
  await trail.connectionEvent({
    connection: 'tracker',
    action: 'disconnected',
    by: 'alice',
    at: '2026-12-07T11:00:00.000Z',
    // What the connections say rides along; it cannot rename the event's connection or action.
    detail: { revokedAtIssuer: true, action: 'forged', name: 'other' },
  });
  await trail.close();

  const reader = await JsonlAuditReader.open(file);
  const events = await reader.events();
  const records = events.map((e) => JSON.parse(e.text));
  expect(records[0]).toMatchObject({
    event: 'connection',
    method: 'connection/connected',
    target: 'tracker',
    // The person is who their issuer says: the same subject at another issuer is someone else.
    principal: { sub: 'alice', iss: 'https://id.example.com' },
    requestId: null,
    flowId: null,
    time: '2026-12-07T10:00:00.000Z',
    notes: { connection: { name: 'tracker', action: 'connected', id: 'c1' } },
  });
  expect(records[1]).toMatchObject({
    method: 'connection/disconnected',
    notes: { connection: { name: 'tracker', action: 'disconnected', revokedAtIssuer: true } },
  });
  expect((await verifyReader(reader, { verifiers: [signer.verifier] })).ok).toBe(true);

  const schema = JSON.parse(
    readFileSync(join(import.meta.dirname, 'schemas/ocsf-api-activity.schema.json'), 'utf8'),
  );
  const validate = new Ajv({ allErrors: true, strictRequired: false }).compile(schema);
  const ocsf = toOcsf(events[1]!, { name: 'mrtr', version: '0' });
  expect(validate(ocsf), JSON.stringify(validate.errors)).toBe(true);
  expect(ocsf).toMatchObject({
    activity_name: 'connection/disconnected',
    actor: { user: { uid: 'alice' } },
    resources: [{ name: 'tracker' }],
    unmapped: { mrtr: { event: 'connection' } },
  });
  await reader.close();
});
