// The edges a hostile or unlucky client finds: running out of file descriptors, Expect:
// 100-continue, raw bytes in a path, names that would reach headers, admin names with escapes,
// what /metrics and /v1/models reveal once client keys exist, the master key as a client key.
// Regression tests, each named after what went wrong.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import net from 'node:net';
import {
  GATEWAY_BIN, startMock, startGateway, request, rawExchange, group, sleep, tempDir, metricValue,
  eventually,
} from './harness.mjs';

const MASTER = 'hardening-master-key-0123456789';
const started = [];
after(async () => {
  for (const s of started.reverse()) await s.stop();
});

async function gatewayWithKeys() {
  const mock = await startMock();
  started.push(mock);
  const gateway = await startGateway(`
server: {master_key: os.environ/MASTER}
models:
${group('a', mock.port)}${group('b', mock.port)}
keys:
  - {name: only-a, key: os.environ/ONLY_A, models: [a]}
`, { env: { MASTER, ONLY_A: 'sk-only-a-0123456789abcdef' } });
  started.push(gateway);
  return { mock, gateway };
}

// CPU seconds (user + system) a process has used, from /proc.
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;  // utime, stime in clock ticks
}

// The sanitizers' own runtime needs descriptors to check (UBSan's vptr check reads the process's
// mappings): out of them, a sanitizer build reports a false error and stops. The dev build runs it.
const SANITIZED = /lib(asan|ubsan|tsan)/.test(spawnSync('ldd', [GATEWAY_BIN], { encoding: 'utf8' }).stdout ?? '');

test('out of file descriptors: accepting backs off instead of spinning, and recovers',
     { skip: SANITIZED && 'a sanitizer build cannot run out of descriptors' }, async () => {
  const mock = await startMock();
  started.push(mock);
  const dir = tempDir();
  const file = path.join(dir, 'switchyard.yaml');
  writeFileSync(file, `models:\n${group('a', mock.port)}`);
  // 48 descriptors: the gateway's own (~25 with two workers) leave room for a few connections.
  const child = spawn('prlimit', ['--nofile=48:48', GATEWAY_BIN, 'serve', '--config', file,
                                  '--listen', '127.0.0.1:0', '--workers', '1'],
                      { stdio: ['ignore', 'ignore', 'pipe'],
                        env: { ...process.env, SWITCHYARD_DATA_DIR: dir } });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d.toString()));
  try {
    await eventually(() => /listening on [\d.]+:(\d+)/.test(stderr),
                     { what: 'the gateway to listen', timeoutMs: 15000 });
    const port = Number(stderr.match(/listening on [\d.]+:(\d+)/)[1]);
    const sockets = [];
    for (let i = 0; i < 60; i++) {
      const s = net.connect(port, '127.0.0.1');
      s.on('error', () => {});
      sockets.push(s);
    }
    await eventually(() => /"event":"accept_failed"/.test(stderr),
                     { what: 'the gateway to run out of descriptors' });
    assert.match(stderr, /"event":"accept_failed"/, 'the gateway ran out of descriptors');
    const before = cpuSeconds(child.pid);
    await sleep(1000);  // the measured second: the CPU a starved accept loop uses in it
    const used = cpuSeconds(child.pid) - before;
    assert.ok(used < 0.3, `used ${used.toFixed(2)} s of CPU in 1 s while out of descriptors`);
    const freed = stderr.length;
    for (const s of sockets) s.destroy();
    // Its connections closed, the gateway has descriptors again and accepts again.
    await eventually(() => stderr.slice(freed).includes('"event":"accept_recovered"'),
                     { what: 'the gateway to accept again' });
    const res = await request(port, { body: { model: 'a', messages: [] } });
    assert.equal(res.status, 200, 'serves again once descriptors are free');
  } finally {
    child.kill('SIGINT');
  }
});

// One raw request on an open socket; resolves to the status line and headers of its answer.
function rawRequest(socket, json) {
  return new Promise((resolve) => {
    let text = '';
    const onData = (d) => {
      text += d.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(text.match(/content-length: (\d+)/i)?.[1] ?? 0);
      if (text.length < end + 4 + length) return;
      socket.off('data', onData);
      resolve({ head: text.slice(0, end), body: text.slice(end + 4, end + 4 + length) });
    };
    socket.on('data', onData);
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n` +
                 `content-length: ${Buffer.byteLength(json)}\r\n\r\n${json}`);
  });
}

test('out of file descriptors for an upstream: a 503 of the gateway\'s own; no deployment benched',
     { skip: SANITIZED && 'a sanitizer build cannot run out of descriptors' }, async () => {
  const mock = await startMock();
  started.push(mock);
  const dir = tempDir();
  const file = path.join(dir, 'switchyard.yaml');
  // One failure would cool the deployment down for a minute, if it were counted as its failure.
  writeFileSync(file, `health: {allowed_fails: 1, cooldown_ms: 60000}\nmodels:\n${group('a', mock.port)}`);
  const child = spawn('prlimit', ['--nofile=48:48', GATEWAY_BIN, 'serve', '--config', file,
                                  '--listen', '127.0.0.1:0', '--workers', '1'],
                      { stdio: ['ignore', 'ignore', 'pipe'],
                        env: { ...process.env, SWITCHYARD_DATA_DIR: dir } });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d.toString()));
  try {
    await eventually(() => /listening on [\d.]+:(\d+)/.test(stderr),
                     { what: 'the gateway to listen', timeoutMs: 15000 });
    const port = Number(stderr.match(/listening on [\d.]+:(\d+)/)[1]);
    // Accepted connections take every descriptor; the first ones then ask for an answer, which
    // needs one more for the upstream.
    const sockets = [];
    for (let i = 0; i < 60; i++) {
      const s = net.connect(port, '127.0.0.1');
      s.on('error', () => {});
      sockets.push(s);
    }
    await eventually(() => /"event":"accept_failed"/.test(stderr),
                     { what: 'the gateway to run out of descriptors' });
    const body = JSON.stringify({ model: 'a', messages: [{ role: 'user', content: 'hi' }] });
    for (const socket of sockets.slice(0, 3)) {
      const { head, body: answer } = await rawRequest(socket, body);
      assert.match(head, /^HTTP\/1\.1 503 /, head);
      assert.match(head, /retry-after: 1\r\n/i);
      assert.equal(JSON.parse(answer).error.code, 'gateway_overloaded');
    }
    for (const s of sockets) s.destroy();
    // Once descriptors are free it serves at once: the deployment was never cooled down.
    const res = await eventually(
      () => request(port, { body: { model: 'a', messages: [] } }).catch(() => null),
      { what: 'an answer once descriptors are free', intervalMs: 20 });
    assert.equal(res.status, 200, res.body);
  } finally {
    child.kill('SIGINT');
  }
});

test('Expect: 100-continue gets its go-ahead before the body', async () => {
  const { gateway } = await gatewayWithKeys();
  const body = JSON.stringify({ model: 'a', messages: [{ role: 'user', content: 'Hi' }] });
  const socket = net.connect(gateway.port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  let received = '';
  socket.on('data', (d) => (received += d.toString()));
  socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n` +
               `authorization: Bearer ${MASTER}\r\nexpect: 100-continue\r\n` +
               `content-length: ${Buffer.byteLength(body)}\r\n\r\n`);
  try {
    // At once: well before the second a client waits for it before sending the body anyway.
    await eventually(() => received.includes('100 Continue'),
                     { what: 'the 100 Continue', timeoutMs: 900 });
    assert.match(received, /^HTTP\/1\.1 100 Continue\r\n\r\n/, 'told to go ahead at once');
    socket.write(body);
    await eventually(() => received.includes('"chat.completion"'),
                     { what: 'the answer', timeoutMs: 3000 });
  } finally {
    socket.destroy();
  }
  assert.match(received, /HTTP\/1\.1 200 OK/);
});

test('raw bytes in a path come back escaped, in valid JSON and a valid log line', async () => {
  const { gateway } = await gatewayWithKeys();
  const { text } = await rawExchange(gateway.port, Buffer.concat([
    Buffer.from('GET /v1/\xff\xfe"x HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n', 'latin1')]));
  const body = text.slice(text.indexOf('\r\n\r\n') + 4);
  const error = JSON.parse(Buffer.from(body, 'latin1').toString('utf8')).error;
  assert.match(error.message, /\/v1\/%FF%FE%22x/);
  // The harness parses every access-log line as JSON; the line is there and names the path.
  await eventually(() => gateway.logs.some((l) => l.path === '/v1/%FF%FE%22x'),
                   { what: 'the access-log line of the request' });
  assert.ok(gateway.logs.some((l) => l.path === '/v1/%FF%FE%22x'));
});

test('names that would reach response headers are refused by switchyard check', async () => {
  const dir = tempDir();
  for (const [name, yaml] of [
    ['quote in a group name', 'models:\n  - name: "a\\"b"\n    deployments: [{model: m, api_base: "http://h:1/v1"}]\n'],
    ['CR/LF in a deployment name', 'models:\n  - name: a\n    deployments: [{name: "x\\r\\nset-cookie: y", model: m, api_base: "http://h:1/v1"}]\n'],
    ['space in a model', 'models:\n  - name: a\n    deployments: [{model: "m x", api_base: "http://h:1/v1"}]\n'],
    ['a duplicated key', 'models:\n  - name: a\n    deployments: [{model: m, api_base: "http://h:1/v1"}]\nmodels:\n  - name: b\n    deployments: [{model: m, api_base: "http://h:1/v1"}]\n'],
  ]) {
    const file = path.join(dir, 'bad.yaml');
    writeFileSync(file, yaml);
    const out = spawnSync(GATEWAY_BIN, ['check', file], { encoding: 'utf8' });
    assert.notEqual(out.status, 0, `${name}: accepted`);
    assert.match(out.stderr + out.stdout, /bad\.yaml:\d+: /, `${name}: no line given`);
  }
});

test('admin key names: refused unless header-safe, and DELETE decodes the path', async () => {
  const { gateway } = await gatewayWithKeys();
  const admin = (method, target, body) => request(gateway.port, {
    method, path: target, body, headers: { authorization: `Bearer ${MASTER}` },
  });
  assert.equal((await admin('POST', '/admin/keys', { name: 'a b' })).status, 400);
  assert.equal((await admin('POST', '/admin/keys', { name: 'x\r\ny' })).status, 400);
  const added = await admin('POST', '/admin/keys', { name: 'team:a+b' });
  assert.equal(added.status, 201, added.body);
  const removed = await admin('DELETE', '/admin/keys/team%3Aa%2Bb');
  assert.equal(removed.status, 200, removed.body);
  assert.equal(JSON.parse(removed.body).deleted, 'team:a+b');
  assert.equal((await admin('DELETE', '/admin/keys/team%3Aa%2Bb')).status, 404);
  assert.equal((await admin('DELETE', '/admin/keys/%zz')).status, 404);
});

test('the master key cannot become a client key', async () => {
  const { gateway } = await gatewayWithKeys();
  const res = await request(gateway.port, {
    path: '/admin/keys', body: { name: 'sneaky', key: MASTER },
    headers: { authorization: `Bearer ${MASTER}` },
  });
  assert.equal(res.status, 400);
  assert.match(JSON.parse(res.body).error.message, /master key/);
  const dir = tempDir();
  const file = path.join(dir, 'k.yaml');
  writeFileSync(file, `server: {master_key: os.environ/M}\nmodels:\n${group('a', 1)}keys:\n  - {name: k, key: os.environ/M}\n`);
  const out = spawnSync(GATEWAY_BIN, ['check', file], { encoding: 'utf8', env: { ...process.env, M: MASTER } });
  assert.notEqual(out.status, 0);
  assert.match(out.stderr + out.stdout, /is the master key/);
});

test('with client keys, /metrics needs the master key and /v1/models a key (its groups only)', async () => {
  const { gateway } = await gatewayWithKeys();
  assert.equal((await request(gateway.port, { method: 'GET', path: '/metrics' })).status, 401);
  const bad = await request(gateway.port, { method: 'GET', path: '/metrics',
                                             headers: { authorization: 'Bearer sk-only-a-0123456789abcdef' } });
  assert.equal(bad.status, 401);
  const metrics = await request(gateway.port, { method: 'GET', path: '/metrics',
                                                 headers: { authorization: `Bearer ${MASTER}` } });
  assert.equal(metrics.status, 200);
  assert.match(metrics.body, /switchyard_requests_total/);

  assert.equal((await request(gateway.port, { method: 'GET', path: '/v1/models' })).status, 401);
  const mine = await request(gateway.port, { method: 'GET', path: '/v1/models',
                                              headers: { authorization: 'Bearer sk-only-a-0123456789abcdef' } });
  assert.equal(mine.status, 200);
  assert.deepEqual(JSON.parse(mine.body).data.map((m) => m.id), ['a']);
  const all = await request(gateway.port, { method: 'GET', path: '/v1/models',
                                             headers: { authorization: `Bearer ${MASTER}` } });
  assert.deepEqual(JSON.parse(all.body).data.map((m) => m.id), ['a', 'b']);
});

test('a client\'s JSON schema cannot crash or stall the gateway: patterns run in linear time',
     async () => {
  const mock = await startMock();
  started.push(mock);
  // One worker: a check that held its event loop would hold every other request.
  const gateway = await startGateway(`models:\n${group('a', mock.port)}`, { workers: 1 });
  started.push(gateway);
  const ask = (property) => request(gateway.port, {
    body: {
      model: 'a',
      messages: [{ role: 'user', content: 'Fill it in' }],
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {
        type: 'object', required: ['s'], properties: { s: property } } } },
    },
  });
  // `.*` against 100,000 characters overflowed the stack of a backtracking engine (SIGSEGV).
  const long = await ask({ type: 'string', minLength: 100000, pattern: '.*' });
  assert.equal(long.status, 200, long.body.slice(0, 300));
  assert.equal(long.headers['x-switchyard-validation'], 'passed');
  // `^(\w+)+!$` against 28 characters took seconds of backtracking on the event loop; meanwhile
  // a plain request on the same worker is answered at once.
  const started_at = Date.now();
  const [nested, plain] = await Promise.all([
    ask({ type: 'string', minLength: 28, maxLength: 28, pattern: '^(\\w+)+!$' }),
    (async () => {
      await sleep(5);  // on purpose: the plain request follows the nested one
      const res = await request(gateway.port, { body: { model: 'a', messages: [] } });
      return { res, ms: Date.now() - started_at };
    })(),
  ]);
  assert.equal(nested.status, 502, nested.body);
  assert.equal(JSON.parse(nested.body).error.code, 'invalid_output');
  assert.equal(plain.res.status, 200);
  assert.ok(plain.ms < 1000, `a plain request waited ${plain.ms} ms`);
  assert.ok(Date.now() - started_at < 2000);
  // A pattern RE2 cannot run (lookahead) is not checked: the answer is served, marked skipped.
  const lookahead = await ask({ type: 'string', pattern: '^(?=t)' });
  assert.equal(lookahead.status, 200);
  assert.equal(lookahead.headers['x-switchyard-validation'], 'skipped');
  assert.equal(gateway.child.exitCode, null);
});

test('a client that reads a large answer slowly but steadily is not cut; one that stops is',
     async () => {
  const mock = await startMock();
  started.push(mock);
  await mock.scenario([{ match: { model: 'big' }, fault: 'event_bytes=25165824' }]);
  // A stall of 500 ms counts as gone; a 24 MB answer at ~12 MB/s takes longer than that in all.
  const gateway = await startGateway(`server: {write_timeout_ms: 500}\nmodels:\n${group('big', mock.port)}`);
  started.push(gateway);
  const json = JSON.stringify({ model: 'big', messages: [{ role: 'user', content: 'all of it' }] });
  const read = (pattern) => new Promise((resolve) => {
    const socket = net.connect(gateway.port, '127.0.0.1', () => {
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n` +
                   `content-length: ${json.length}\r\n\r\n${json}`);
    });
    let bytes = 0;
    const begun = Date.now();
    socket.on('data', (d) => {
      bytes += d.length;
      if (pattern === 'steady') {
        socket.pause();
        setTimeout(() => socket.resume(), 5);
      } else if (bytes > 1 << 20) {
        socket.pause();  // and never again
        setTimeout(() => socket.destroy(), 3000);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve({ bytes, ms: Date.now() - begun }));
    socket.setTimeout(30000, () => socket.destroy());
    if (pattern === 'steady') {
      // The answer is complete once its Content-Length is read: then close.
      const check = setInterval(() => {
        if (bytes >= 25165824) { clearInterval(check); socket.end(); }
      }, 20);
      socket.on('close', () => clearInterval(check));
    }
  });
  const steady = await read('steady');
  console.log(`# a steady slow reader took ${steady.ms} ms for ${steady.bytes} bytes`);
  assert.ok(steady.bytes >= 25165824, `cut after ${steady.bytes} bytes in ${steady.ms} ms`);
  assert.ok(steady.ms > 500, 'the answer took longer than one write timeout in all');
  const stopped = await read('stops');
  assert.ok(stopped.bytes < 25165824, 'a client that stopped reading was not cut');
  await eventually(() => gateway.logs.some((l) => /read nothing for 500 ms/.test(l.error ?? '')),
                   { what: 'the stalled answer in the access log' });
});

test('request bodies in flight are bounded per client and in all: a 429 / 503 before the body',
     async () => {
  const mock = await startMock();
  started.push(mock);
  await mock.scenario([{ match: { model: 'slow' }, fault: 'delay_headers_ms=1500' }]);
  const gateway = await startGateway(`
server: {max_body_bytes_in_flight: 1000000, max_body_bytes_in_flight_per_key: 600000}
models:\n${group('slow', mock.port)}`);
  started.push(gateway);
  const body = JSON.stringify({ model: 'slow', messages: [{ role: 'user', content: 'x'.repeat(400000) }] });
  const send = (key) => request(gateway.port, { body, headers: { authorization: `Bearer ${key}` } });
  const inFlight = [send('sk-one'), send('sk-two')];
  // Wait until both are being served (the scrape itself is a request in flight too).
  const serving = async () => metricValue(await gateway.metrics(), 'switchyard_in_flight_requests');
  await eventually(async () => (await serving()) === 3, { what: 'both requests in flight' });
  const perKey = await send('sk-one');
  assert.equal(perKey.status, 429, perKey.body);
  assert.equal(perKey.headers['retry-after'], '1');
  assert.match(JSON.parse(perKey.body).error.message, /max_body_bytes_in_flight_per_key/);
  const total = await send('sk-three');
  assert.equal(total.status, 503, total.body);
  assert.equal(JSON.parse(total.body).error.code, 'gateway_overloaded');
  for (const r of await Promise.all(inFlight)) assert.equal(r.status, 200, r.body);
  // Answered: the bytes are free again.
  assert.equal((await send('sk-one')).status, 200);
});
