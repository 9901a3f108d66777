// Graceful drain: on SIGTERM in-flight requests finish, new connections are refused, and the
// process exits.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startMock, startGateway, request, group, sleep } from './harness.mjs';

let mock;

after(async () => {
  await mock?.stop();
});

test('SIGTERM lets in-flight requests finish, then exits 0', async () => {
  mock = await startMock();
  await mock.scenario([{ match: { model: 'slow' }, fault: 'delay_headers_ms=700' }]);
  const gateway = await startGateway(`
server: {drain_timeout_ms: 5000}
models:
${group('slow', mock.port)}${group('fast', mock.port)}`);
  // An idle keep-alive connection must not hold the drain up.
  const idle = net.connect(gateway.port, '127.0.0.1');
  await new Promise((r) => idle.once('connect', r));
  const idleClosed = new Promise((r) => idle.once('close', r));

  const inFlight = request(gateway.port, { body: { model: 'slow', messages: [] } });
  await sleep(200);
  const started = Date.now();
  gateway.child.kill('SIGTERM');
  const res = await inFlight;
  assert.equal(res.status, 200, 'the in-flight request completed');
  assert.equal(JSON.parse(res.body).model, 'slow');
  assert.equal(res.headers.connection, 'close');
  const code = await gateway.exited();
  assert.equal(code, 0);
  assert.ok(Date.now() - started < 4000, 'exited promptly after the last request');
  await idleClosed;
  await assert.rejects(request(gateway.port, { method: 'GET', path: '/health/live' }),
                       /ECONNREFUSED/);
});
