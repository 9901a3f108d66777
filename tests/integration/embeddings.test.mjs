// POST /v1/embeddings through the same engine as chat: groups of embedding deployments,
// retries, fallbacks and cooldowns, answers passed through as the provider sent them; a group of
// the other mode is a clear 400.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { GATEWAY_BIN, startMock, startGateway, request, tempDir, eventually } from './harness.mjs';

let mock;
let gateway;

before(async () => {
  mock = await startMock();
  const p = mock.port;
  const d = (model) => `{name: ${model}, model: ${model}, api_base: "http://127.0.0.1:${p}/v1"}`;
  await mock.scenario([
    { match: { model: 'embed-flaky' }, fault: 'status=503' },
    { match: { model: 'embed-down' }, fault: 'status=500' },
  ]);
  gateway = await startGateway(`
retry: {base_ms: 5, cap_ms: 20}
models:
  - name: embed
    mode: embeddings
    deployments: [${d('text-embedding-3-small')}]
  - name: embed-mixed
    mode: embeddings
    strategy: priority
    deployments: [${d('embed-flaky')}, ${d('embed-steady')}]
  - name: embed-primary
    mode: embeddings
    deployments: [${d('embed-down')}]
    fallbacks: [embed]
  - name: chat
    deployments: [${d('gpt-4o-mini')}]
`);
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

const embed = (body, target = '/v1/embeddings') =>
  request(gateway.port, { path: target, body });
const hits = async (model) => (await mock.stats()).requests.filter((r) => r.model === model);

test('a string and a list of strings: one vector each, usage in the access log', async () => {
  const one = await embed({ model: 'embed', input: 'The food was delicious.' });
  assert.equal(one.status, 200, one.body);
  const body = JSON.parse(one.body);
  assert.equal(body.object, 'list');
  assert.equal(body.data.length, 1);
  assert.equal(body.data[0].object, 'embedding');
  assert.ok(body.data[0].embedding.every((x) => typeof x === 'number'));
  assert.equal(body.model, 'text-embedding-3-small', 'the deployment\'s model answered');
  assert.equal(one.headers['x-switchyard-model-group'], 'embed');
  const sent = JSON.parse((await hits('text-embedding-3-small')).at(-1).body);
  assert.equal(sent.model, 'text-embedding-3-small');

  const many = await embed({ model: 'embed', input: ['a', 'b', 'c'], dimensions: 4 });
  assert.equal(many.status, 200, many.body);
  const vectors = JSON.parse(many.body).data;
  assert.deepEqual(vectors.map((v) => v.index), [0, 1, 2]);
  assert.ok(vectors.every((v) => v.embedding.length === 4));
  // Both requests' access-log lines, written just after the answers went out.
  await eventually(() => gateway.logs.filter((l) => l.route === 'embeddings').length >= 2,
                   { what: 'the access-log lines of both requests' });
  const line = gateway.logs.filter((l) => l.route === 'embeddings').at(-1);
  assert.equal(line.model_group, 'embed');
  assert.ok(Number.isInteger(line.input_tokens) && line.input_tokens > 0, JSON.stringify(line));
});

test('base64 and token inputs pass through unchanged', async () => {
  const res = await embed({ model: 'embed', input: [[1, 2, 3], [4, 5]], encoding_format: 'base64' });
  assert.equal(res.status, 200, res.body);
  const data = JSON.parse(res.body).data;
  assert.equal(data.length, 2);
  assert.equal(typeof data[0].embedding, 'string');
  assert.ok(Buffer.from(data[0].embedding, 'base64').length % 4 === 0, 'float32 little-endian');
});

test('a failing deployment moves to the next one at once; a failing group to its fallback', async () => {
  const res = await embed({ model: 'embed-mixed', input: 'x' });
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-deployment'], 'embed-steady');
  assert.equal((await hits('embed-flaky')).length, 1);

  const fallen = await embed({ model: 'embed-primary', input: 'x' });
  assert.equal(fallen.status, 200, fallen.body);
  assert.equal(fallen.headers['x-switchyard-model-group'], 'embed');
  assert.equal(fallen.headers['x-switchyard-fallback-depth'], '1');
  assert.ok((await hits('embed-down')).length >= 1);
});

test('a group of the other mode is a 400 that says which endpoint serves it', async () => {
  const chatGroup = await embed({ model: 'chat', input: 'x' });
  assert.equal(chatGroup.status, 400);
  assert.match(JSON.parse(chatGroup.body).error.message, /chat model group/);
  const embedGroup = await request(gateway.port, {
    body: { model: 'embed', messages: [{ role: 'user', content: 'Hi' }] },
  });
  assert.equal(embedGroup.status, 400);
  assert.match(JSON.parse(embedGroup.body).error.message, /\/v1\/embeddings/);
});

test('malformed embeddings requests are refused before any upstream call', async () => {
  const before = (await mock.stats()).total;
  for (const [body, param] of [
    [{ model: 'embed' }, 'input'],
    [{ model: 'embed', input: [] }, 'input'],
    [{ model: 'embed', input: ['a', 1] }, 'input'],
    [{ model: 'embed', input: 'a', encoding_format: 'int8' }, 'encoding_format'],
    [{ model: 'embed', input: 'a', dimensions: 0 }, 'dimensions'],
  ]) {
    const res = await embed(body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(JSON.parse(res.body).error.param, param);
  }
  assert.equal((await mock.stats()).total, before);
});

test('an embeddings group must be OpenAI-compatible and fall back only to embeddings groups', () => {
  const dir = tempDir();
  const file = path.join(dir, 'e.yaml');
  writeFileSync(file, `models:
  - name: e
    mode: embeddings
    deployments: [{provider: anthropic, model: claude, api_base: "http://h:1/v1"}]
    fallbacks: [c]
  - name: c
    deployments: [{model: m, api_base: "http://h:1/v1"}]
`);
  const out = spawnSync(GATEWAY_BIN, ['check', file], { encoding: 'utf8' });
  assert.notEqual(out.status, 0);
  assert.match(out.stderr + out.stdout, /must be OpenAI-compatible/);
  assert.match(out.stderr + out.stdout, /serves another mode/);
});
