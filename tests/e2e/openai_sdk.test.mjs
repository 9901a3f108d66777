// The official `openai` npm SDK against Switchyard, unchanged but for baseURL and maxRetries: 0
// (Switchyard is the one layer that retries).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMock, startGateway, group } from '../integration/harness.mjs';

let mock;
let gateway;
let client;

before(async () => {
  mock = await startMock();
  gateway = await startGateway(`
retry: {base_ms: 10, cap_ms: 50}
models:
${group('gpt-4o-mini', mock.port, 'gpt-4o-mini-2024-07-18')}${group('slow', mock.port, 'gpt-slow')}  - name: responses-native
    deployments: [{model: gpt-4.1, api_base: "http://127.0.0.1:${mock.port}/v1", responses_api: true}]
  - name: text-embedding-3-small
    mode: embeddings
    deployments: [{model: text-embedding-3-small, api_base: "http://127.0.0.1:${mock.port}/v1"}]
`);
  client = new OpenAI({ baseURL: `${gateway.base}/v1`, apiKey: 'client-key', maxRetries: 0 });
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

test('chat.completions.create, non-streaming', async () => {
  const { data, response } = await client.chat.completions
    .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] })
    .withResponse();
  assert.equal(data.object, 'chat.completion');
  assert.equal(data.model, 'gpt-4o-mini-2024-07-18');
  assert.match(data.choices[0].message.content, /gpt-4o-mini-2024-07-18/);
  assert.equal(data.choices[0].finish_reason, 'stop');
  assert.ok(data.usage.prompt_tokens > 0);
  assert.match(data._request_id, /^req_/);
  assert.equal(response.headers.get('x-switchyard-model-group'), 'gpt-4o-mini');
});

test('chat.completions.create, streaming with usage', async () => {
  const stream = await client.chat.completions.create({
    model: 'gpt-4o-mini',
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'Hello' }],
  });
  let text = '';
  let usage = null;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    text += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  assert.ok(chunks >= 3);
  assert.match(text, /gpt-4o-mini-2024-07-18/);
  assert.ok(usage && usage.completion_tokens > 0);
});

test('models.list returns the model groups', async () => {
  const ids = [];
  for await (const model of client.models.list()) ids.push(model.id);
  assert.deepEqual(ids, ['gpt-4o-mini', 'slow', 'responses-native', 'text-embedding-3-small']);
});

test('gateway errors surface as the SDK error classes', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: 'no-such-model', messages: [] }),
    (err) => {
      assert.ok(err instanceof OpenAI.NotFoundError, err.constructor.name);
      assert.equal(err.status, 404);
      assert.equal(err.code, 'model_not_found');
      return true;
    });
  // Switchyard retries the 429 itself; when every attempt is limited the SDK sees the 429.
  await mock.scenario([{ match: { model: 'gpt-4o-mini-2024-07-18' }, fault: 'status=429' }]);
  await assert.rejects(
    client.chat.completions.create({ model: 'gpt-4o-mini', messages: [] }),
    (err) => {
      assert.ok(err instanceof OpenAI.RateLimitError, err.constructor.name);
      assert.equal(err.status, 429);
      assert.equal(err.error.attempts.length, 4);
      return true;
    });
  await mock.scenario([{ match: { model: 'gpt-4o-mini-2024-07-18' }, fault: 'status=429', times: 1 }]);
  // Another request (the same one again so soon would be served as the client's retry).
  const recovered = await client.chat.completions
    .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'again' }] })
    .withResponse();
  assert.equal(recovered.response.headers.get('x-switchyard-attempts'), '2');
});

test('embeddings.create: one vector per input, as floats (the SDK asks for base64 and decodes)', async () => {
  const { data, response } = await client.embeddings
    .create({ model: 'text-embedding-3-small', input: ['Hello', 'world'], dimensions: 8 })
    .withResponse();
  assert.equal(data.object, 'list');
  assert.equal(data.data.length, 2);
  for (const item of data.data) {
    assert.equal(item.embedding.length, 8);
    assert.ok(item.embedding.every((x) => Number.isFinite(x)));
  }
  assert.notDeepEqual(data.data[0].embedding, data.data[1].embedding);
  assert.ok(data.usage.prompt_tokens > 0);
  assert.equal(response.headers.get('x-switchyard-model-group'), 'text-embedding-3-small');
});

test('responses.create: a deployment that speaks it, and one that needs translation', async () => {
  for (const [model, upstream] of [['responses-native', 'gpt-4.1'],
                                   ['gpt-4o-mini', 'gpt-4o-mini-2024-07-18']]) {
    const { data, response } = await client.responses
      .create({ model, instructions: 'Be brief.', input: 'Hello' })
      .withResponse();
    assert.equal(data.object, 'response');
    assert.equal(data.status, 'completed');
    assert.equal(data.output_text, `Mock reply from ${upstream}.`);
    assert.equal(data.instructions, 'Be brief.');
    assert.ok(data.usage.input_tokens > 0 && data.usage.output_tokens > 0);
    assert.equal(response.headers.get('x-switchyard-model-group'), model);
  }
});

test('responses.stream: events and the final response, translated from chat completions', async () => {
  const stream = client.responses.stream({ model: 'gpt-4o-mini', input: 'Hello' });
  const deltas = [];
  stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
  const final = await stream.finalResponse();
  assert.equal(deltas.join(''), 'Mock reply from gpt-4o-mini-2024-07-18.');
  assert.equal(final.output_text, 'Mock reply from gpt-4o-mini-2024-07-18.');
  assert.equal(final.status, 'completed');
  assert.ok(final.usage.output_tokens > 0);
});

test('responses.create with previous_response_id on a chat-only deployment: a 400 naming it', async () => {
  await assert.rejects(
    client.responses.create({ model: 'gpt-4o-mini', input: 'Hi', previous_response_id: 'resp_1' }),
    (err) => {
      assert.ok(err instanceof OpenAI.BadRequestError, err.constructor.name);
      assert.equal(err.param, 'previous_response_id');
      return true;
    });
});

test('an SDK that times out and retries with an Idempotency-Key gets the first run\'s answer',
     async () => {
  // The upstream takes 700 ms; the SDK gives up on each try after 300 ms and retries (its
  // default), sending the same key. The first run goes on without its client; no second call.
  await fetch(`${mock.base}/mock/scenario`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ rules: [{ match: { model: 'gpt-slow' }, fault: 'delay_headers_ms=700' }] }),
  });
  await fetch(`${mock.base}/mock/reset`, { method: 'POST' });
  try {
    const impatient = new OpenAI({ baseURL: `${gateway.base}/v1`, apiKey: 'client-key',
                                   timeout: 300, maxRetries: 4 });
    const { data, response } = await impatient.chat.completions
      .create({ model: 'slow', messages: [{ role: 'user', content: 'Hello' }] },
              { headers: { 'Idempotency-Key': `sdk-timeout-${process.pid}` } })
      .withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.equal(response.headers.get('x-switchyard-idempotent-replay'), 'true');
    const stats = await (await fetch(`${mock.base}/mock/stats`)).json();
    assert.equal(stats.requests.filter((r) => r.model === 'gpt-slow').length, 1);
  } finally {
    await fetch(`${mock.base}/mock/scenario`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rules: [] }),
    });
  }
});
