// Every error the gateway answers itself: right status, OpenAI's error envelope, nothing lost.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startGateway, request, rawExchange, closedPort, group } from './harness.mjs';

let mock;
let gateway;

before(async () => {
  mock = await startMock();
  await mock.scenario([{ match: { model: 'slow-headers' }, fault: 'delay_headers_ms=3000' }]);
  const down = await closedPort();
  gateway = await startGateway(`
server: {max_body_bytes: 2048}
retry: {base_ms: 10, cap_ms: 50}
timeouts: {connect_ms: 1000, first_byte_ms: 400, total_ms: 5000}
models:
${group('alpha', mock.port)}${group('beta', mock.port)}${group('slow', mock.port, 'slow-headers')}  - name: down
    deployments:
      - {provider: openai, model: x, api_base: "http://127.0.0.1:${down}/v1"}
`);
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

function assertOpenAiError(res, status, { type, code, param, message }) {
  assert.equal(res.status, status, res.body);
  assert.match(res.headers['content-type'], /^application\/json/);
  const body = JSON.parse(res.body);
  assert.deepEqual(Object.keys(body), ['error']);
  assert.deepEqual(Object.keys(body.error).filter((k) => k !== 'attempts').sort(),
                   ['code', 'message', 'param', 'type']);
  assert.equal(body.error.type, type);
  assert.equal(body.error.code, code);
  assert.equal(body.error.param, param ?? null);
  if (message) assert.match(body.error.message, message);
  return body.error;
}

test('malformed JSON is a 400', async () => {
  const res = await request(gateway.port, { body: '{"model": "alpha", ' });
  assertOpenAiError(res, 400, { type: 'invalid_request_error', code: null,
                                message: /could not parse the JSON body/ });
});

test('a lone UTF-16 surrogate escape is malformed JSON: a 400 that never reaches the upstream', async () => {
  await mock.reset();
  for (const content of ['a \\uDDDD b', 'a \\ud83d b', 'a \\ud83d\\u0041 b']) {
    const res = await request(gateway.port, {
      body: `{"model":"alpha","messages":[{"role":"user","content":"${content}"}]}` });
    assertOpenAiError(res, 400, { type: 'invalid_request_error', code: null,
                                  message: /could not parse the JSON body/ });
  }
  assert.equal((await mock.stats()).total, 0);
  // A high-low pair is a character (U+1F600) and is served.
  const paired = await request(gateway.port, {
    body: '{"model":"alpha","messages":[{"role":"user","content":"a \\ud83d\\ude00 b"}]}' });
  assert.equal(paired.status, 200, paired.body);
  assert.equal((await mock.stats()).total, 1);
});

test('a JSON body that is not an object is a 400', async () => {
  const res = await request(gateway.port, { body: '[1,2,3]' });
  assertOpenAiError(res, 400, { type: 'invalid_request_error', code: null });
});

test('a missing model is a 404 that names no model group', async () => {
  const res = await request(gateway.port, { body: { messages: [] } });
  const error = assertOpenAiError(res, 404, { type: 'invalid_request_error',
                                              code: 'model_not_found', param: 'model' });
  assert.match(error.message, /You must provide a model parameter/);
  assert.doesNotMatch(error.message, /alpha|beta|slow|down/);
});

test('an unknown model is a 404 that names only the model asked for', async () => {
  // A caller without a key, or with one restricted to other groups, learns nothing of the
  // others: GET /v1/models lists what a key may use.
  const res = await request(gateway.port, { body: { model: 'gpt-5-imaginary', messages: [] } });
  const error = assertOpenAiError(res, 404, { type: 'invalid_request_error',
                                              code: 'model_not_found', param: 'model' });
  assert.match(error.message, /gpt-5-imaginary/);
  assert.doesNotMatch(error.message, /alpha|beta|slow|down/);
});

test('GET /v1/models/{id} retrieves one model group, as the SDKs\' models.retrieve does', async () => {
  const one = await request(gateway.port, { method: 'GET', path: '/v1/models/alpha' });
  assert.equal(one.status, 200);
  assert.deepEqual(JSON.parse(one.body),
                   { id: 'alpha', object: 'model', created: 0, owned_by: 'switchyard' });
  const missing = await request(gateway.port, { method: 'GET', path: '/v1/models/gpt-5-imaginary' });
  const error = assertOpenAiError(missing, 404, { type: 'invalid_request_error',
                                                  code: 'model_not_found', param: 'model' });
  assert.doesNotMatch(error.message, /alpha|beta/);
  // Anthropic's SDK sends anthropic-version and reads its own shape.
  const anthropic = await request(gateway.port, { method: 'GET', path: '/v1/models/beta',
                                                  headers: { 'anthropic-version': '2023-06-01' } });
  assert.equal(anthropic.status, 200);
  const model = JSON.parse(anthropic.body);
  assert.equal(model.type, 'model');
  assert.equal(model.id, 'beta');
  const list = await request(gateway.port, { method: 'GET', path: '/v1/models',
                                             headers: { 'anthropic-version': '2023-06-01' } });
  const page = JSON.parse(list.body);
  assert.equal(page.has_more, false);
  assert.equal(page.first_id, 'alpha');
  assert.ok(page.data.every((m) => m.type === 'model'));
  const gone = await request(gateway.port, { method: 'GET', path: '/v1/models/nope',
                                             headers: { 'anthropic-version': '2023-06-01' } });
  assert.equal(gone.status, 404);
  assert.equal(JSON.parse(gone.body).error.type, 'not_found_error');
});

test('a body over the limit is a 413 and never reaches the upstream', async () => {
  await mock.reset();
  const big = JSON.stringify({ model: 'alpha', messages: [{ role: 'user', content: 'x'.repeat(4096) }] });
  const res = await request(gateway.port, { body: big });
  assertOpenAiError(res, 413, { type: 'invalid_request_error', code: 'request_too_large' });
  assert.equal((await mock.stats()).total, 0);
});

test('a wrong method on a known path is a 405 with Allow', async () => {
  const res = await request(gateway.port, { method: 'GET' });
  assertOpenAiError(res, 405, { type: 'invalid_request_error', code: 'method_not_allowed' });
  assert.equal(res.headers.allow, 'POST');
  const res2 = await request(gateway.port, { method: 'DELETE', path: '/v1/models' });
  assert.equal(res2.status, 405);
  assert.equal(res2.headers.allow, 'GET');
});

test('an unknown path is a 404', async () => {
  const res = await request(gateway.port, { method: 'GET', path: '/v1/nothing?x=1' });
  assertOpenAiError(res, 404, { type: 'invalid_request_error', code: null,
                                message: /Invalid URL \(GET \/v1\/nothing\)/ });
});

test('an unreachable upstream is a 502', async () => {
  const res = await request(gateway.port, { body: { model: 'down', messages: [] } });
  const error = assertOpenAiError(res, 502, { type: 'upstream_error', code: 'upstream_unreachable',
                                              message: /refused/i });
  assert.equal(error.attempts.length, 1, 'a refused connect fails over, it is not retried');
  assert.equal(error.attempts[0].error_class, 'connection');
});

test('an upstream that does not answer in time is a 504 (after one retry)', async () => {
  const started = Date.now();
  const res = await request(gateway.port, { body: { model: 'slow', messages: [] } });
  const error = assertOpenAiError(res, 504, { type: 'upstream_error', code: 'upstream_timeout' });
  assert.equal(error.attempts.length, 2);
  const took = Date.now() - started;
  assert.ok(took >= 750 && took < 4000, `504 after ${took} ms (first_byte_ms is 400, one retry)`);
});

test('malformed HTTP gets a 400 and the connection closes', async () => {
  const { text } = await rawExchange(gateway.port, 'NOT HTTP AT ALL\r\n\r\n');
  assert.match(text, /^HTTP\/1\.1 400 /);
  assert.match(text, /"type":"invalid_request_error"/);
});

test('pipelined requests each get exactly one response, in order', async () => {
  const one = 'GET /health/live HTTP/1.1\r\nhost: x\r\n\r\n';
  const two = 'GET /nope HTTP/1.1\r\nhost: x\r\n\r\n';
  const three = 'GET /v1/models HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n';
  const { text } = await rawExchange(gateway.port, one + two + three);
  const statuses = [...text.matchAll(/HTTP\/1\.1 (\d+) /g)].map((m) => Number(m[1]));
  assert.deepEqual(statuses, [200, 404, 200]);
});

test('every local reply was logged once, without request content', async () => {
  await new Promise((r) => setTimeout(r, 100));
  const statuses = gateway.logs.map((l) => l.status);
  for (const s of [400, 404, 405, 413, 502, 504]) assert.ok(statuses.includes(s), `logged ${s}`);
  const all = JSON.stringify(gateway.logs);
  assert.ok(!all.includes('xxxxxxxx'), 'no prompt text in logs');
});
