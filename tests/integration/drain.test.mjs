// Graceful drain: on SIGTERM readiness fails at once and every answer closes its connection while
// the listener stays open for server.drain_delay_ms; then new connections are refused, idle ones
// close, in-flight requests finish, and the process exits.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import http from 'node:http';
import { startMock, startGateway, request, group, eventually } from './harness.mjs';

let mock;

after(async () => {
  await mock?.stop();
});

test('SIGTERM lets in-flight requests finish, then exits 0', async () => {
  mock = await startMock();
  await mock.scenario([{ match: { model: 'slow' }, fault: 'delay_headers_ms=700' }]);
  const gateway = await startGateway(`
server: {drain_delay_ms: 0, drain_timeout_ms: 5000}
models:
${group('slow', mock.port)}${group('fast', mock.port)}`);
  // An idle keep-alive connection must not hold the drain up.
  const idle = net.connect(gateway.port, '127.0.0.1');
  await new Promise((r) => idle.once('connect', r));
  const idleClosed = new Promise((r) => idle.once('close', r));

  const inFlight = request(gateway.port, { body: { model: 'slow', messages: [] } });
  // The signal comes while the request waits for its upstream (700 ms).
  await eventually(async () => (await mock.stats()).requests.some((r) => r.model === 'slow'),
                   { what: 'the request to reach the upstream' });
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

test('during the drain delay: readiness 503, keep-alive answers close, the listener still accepts', async () => {
  const gateway = await startGateway(`
server: {drain_delay_ms: 1500, drain_timeout_ms: 5000}
models:
${group('fast', mock.port)}`);
  // A keep-alive connection that is idle when the signal comes.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = (path) => new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: gateway.port, path, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
  const before = await get('/health/ready');
  assert.equal(before.status, 200);
  assert.notEqual(before.headers.connection, 'close');

  const signalled = Date.now();
  gateway.child.kill('SIGTERM');
  const ready = await eventually(async () => {
    const r = await request(gateway.port, { method: 'GET', path: '/health/ready' });
    return r.status === 503 && r;
  }, { what: 'readiness to fail once the signal is handled' });
  assert.equal(ready.status, 503, 'a new connection is accepted and told the gateway is draining');
  assert.equal(ready.headers.connection, 'close');
  const served = await request(gateway.port, { body: { model: 'fast', messages: [] } });
  assert.equal(served.status, 200, 'requests are still served during the delay');
  const onIdle = await get('/health/live');
  assert.equal(onIdle.status, 200, 'the idle keep-alive connection was not cut');
  assert.equal(onIdle.headers.connection, 'close', 'it is closed after this answer');
  agent.destroy();

  const code = await gateway.exited();
  assert.equal(code, 0);
  const took = Date.now() - signalled;
  assert.ok(took >= 1400 && took < 4000, `exited ${took} ms after SIGTERM (delay 1500 ms)`);
  await assert.rejects(request(gateway.port, { method: 'GET', path: '/health/live' }),
                       /ECONNREFUSED/);
});

test('a second signal during the drain stops at once', async () => {
  const gateway = await startGateway(`
server: {drain_delay_ms: 10000, drain_timeout_ms: 10000}
models:
${group('fast', mock.port)}`);
  gateway.child.kill('SIGTERM');
  const ready = await eventually(async () => {
    const r = await request(gateway.port, { method: 'GET', path: '/health/ready' });
    return r.status === 503 && r;
  }, { what: 'readiness to fail once the signal is handled' });
  assert.equal(ready.status, 503, 'the first signal started the drain');
  const signalled = Date.now();
  gateway.child.kill('SIGTERM');
  await gateway.exited();
  const took = Date.now() - signalled;
  assert.ok(took < 3000, `exited ${took} ms after the second signal (drain delay 10000 ms)`);
  assert.match(gateway.stderr(), /during the drain, stopping now/);
});
