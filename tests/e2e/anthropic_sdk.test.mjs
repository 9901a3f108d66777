// The official `@anthropic-ai/sdk` npm package against Switchyard's /v1/messages, unchanged but
// for baseURL and maxRetries: 0 — served by an Anthropic deployment and, across providers, by an
// OpenAI one.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startMock, startGateway } from '../integration/harness.mjs';

let mock;
let gateway;
let client;

before(async () => {
  mock = await startMock();
  const p = mock.port;
  gateway = await startGateway(`
retry: {base_ms: 10, cap_ms: 50}
models:
  - name: claude-sonnet-4-5
    deployments: [{provider: anthropic, model: claude-sonnet-4-5-20250929, api_base: "http://127.0.0.1:${p}/v1"}]
  - name: via-openai
    deployments: [{provider: openai, model: gpt-4.1, api_base: "http://127.0.0.1:${p}/v1"}]
`);
  client = new Anthropic({ baseURL: gateway.base, apiKey: 'client-key', maxRetries: 0 });
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

for (const [group, model] of [['claude-sonnet-4-5', 'claude-sonnet-4-5-20250929'],
                              ['via-openai', 'gpt-4.1']]) {
  test(`messages.create, non-streaming (${group})`, async () => {
    const { data, response } = await client.messages
      .create({ model: group, max_tokens: 256, messages: [{ role: 'user', content: 'Hello' }] })
      .withResponse();
    assert.equal(data.type, 'message');
    assert.equal(data.role, 'assistant');
    assert.equal(data.content[0].type, 'text');
    assert.match(data.content[0].text, new RegExp(model.replace(/\./g, '\\.')));
    assert.equal(data.stop_reason, 'end_turn');
    assert.ok(data.usage.output_tokens > 0);
    assert.equal(response.headers.get('x-switchyard-model'), model);
  });

  test(`messages.stream (${group})`, async () => {
    const stream = client.messages.stream({
      model: group, max_tokens: 256, messages: [{ role: 'user', content: 'Hello' }],
    });
    let text = '';
    stream.on('text', (t) => { text += t; });
    const final = await stream.finalMessage();
    assert.match(text, new RegExp(model.replace(/\./g, '\\.')));
    assert.equal(final.stop_reason, 'end_turn');
    assert.ok(final.usage.output_tokens > 0);
  });
}

test('gateway errors surface as the SDK error classes', async () => {
  await assert.rejects(
    client.messages.create({ model: 'no-such-model', max_tokens: 10, messages: [] }),
    (err) => {
      assert.ok(err instanceof Anthropic.NotFoundError, err.constructor.name);
      assert.equal(err.status, 404);
      assert.equal(err.error.type, 'error');
      assert.equal(err.error.error.type, 'not_found_error');
      return true;
    });
});
