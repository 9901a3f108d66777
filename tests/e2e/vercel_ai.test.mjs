// The Vercel AI SDK (`ai` with @ai-sdk/openai and @ai-sdk/anthropic) against Switchyard, with
// maxRetries: 0: the default openai(model) path (the Responses API) to a deployment that speaks
// it and to ones that do not (translated), openai.chat(model), and anthropic(model); text,
// streams and tool calls.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, generateObject, streamText, tool, jsonSchema } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { startMock, startGateway } from '../integration/harness.mjs';

let mock;
let gateway;
let openai;
let anthropic;

before(async () => {
  mock = await startMock();
  const base = `http://127.0.0.1:${mock.port}/v1`;
  await mock.scenario([{ match: { model: 'tools-native' }, fault: 'tool_use=1' },
                       { match: { model: 'tools-claude' }, fault: 'tool_use=1' }]);
  gateway = await startGateway(`
models:
  - name: native
    deployments: [{model: native-model, api_base: "${base}", responses_api: true}]
  - name: chat-only
    deployments: [{model: chat-model, api_base: "${base}"}]
  - name: claude
    deployments: [{provider: anthropic, model: claude-sonnet-4-5, api_base: "${base}", api_key: k}]
  - name: tools-native
    deployments: [{model: tools-native, api_base: "${base}", responses_api: true}]
  - name: tools-claude
    deployments: [{provider: anthropic, model: tools-claude, api_base: "${base}", api_key: k}]
  - name: limited
    deployments: [{model: limited-model, api_base: "${base}"}]
`);
  openai = createOpenAI({ baseURL: `${gateway.base}/v1`, apiKey: 'unused' });
  anthropic = createAnthropic({ baseURL: `${gateway.base}/v1`, apiKey: 'unused' });
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

const weather = {
  get_weather: tool({
    description: 'The weather in a city',
    inputSchema: jsonSchema({ type: 'object', properties: { query: { type: 'string' } } }),
  }),
};

async function collect(stream) {
  let text = '';
  for await (const part of stream.textStream) text += part;
  return text;
}

for (const [group, model] of [['native', 'native-model'], ['chat-only', 'chat-model'],
                              ['claude', 'claude-sonnet-4-5']]) {
  test(`openai(${group}) — the Responses API — generateText and streamText`, async () => {
    const { text, usage } = await generateText({ model: openai(group), prompt: 'Hello', maxRetries: 0 });
    assert.equal(text, `Mock reply from ${model}.`);
    assert.ok(usage.inputTokens > 0 && usage.outputTokens > 0);
    const stream = streamText({ model: openai(group), prompt: 'Hello', maxRetries: 0 });
    assert.equal(await collect(stream), `Mock reply from ${model}.`);
    assert.equal(await stream.finishReason, 'stop');
  });
}

test('openai.chat(model) — chat completions — generateText and streamText', async () => {
  const { text } = await generateText({ model: openai.chat('chat-only'), prompt: 'Hi', maxRetries: 0 });
  assert.equal(text, 'Mock reply from chat-model.');
  const stream = streamText({ model: openai.chat('claude'), prompt: 'Hi', maxRetries: 0 });
  assert.equal(await collect(stream), 'Mock reply from claude-sonnet-4-5.');
});

test('anthropic(model) — Anthropic messages — generateText and streamText', async () => {
  const { text } = await generateText({ model: anthropic('claude'), prompt: 'Hi', maxRetries: 0 });
  assert.equal(text, 'Mock reply from claude-sonnet-4-5.');
  const stream = streamText({ model: anthropic('chat-only'), prompt: 'Hi', maxRetries: 0 });
  assert.equal(await collect(stream), 'Mock reply from chat-model.');
});

test('tool calls: Responses native, Responses translated to Anthropic, and Anthropic', async () => {
  for (const model of [openai('tools-native'), openai('tools-claude'), anthropic('tools-claude')]) {
    const { toolCalls, finishReason } = await generateText({
      model, prompt: 'Weather in Paris?', tools: weather, maxRetries: 0,
    });
    assert.equal(toolCalls.length, 1, model.modelId);
    assert.equal(toolCalls[0].toolName, 'get_weather');
    // Input made from the tool's schema, as a provider's would fit it.
    assert.deepEqual(toolCalls[0].input, { query: 'value' });
    assert.equal(finishReason, 'tool-calls');
  }
  const stream = streamText({ model: openai('tools-claude'), prompt: 'Weather?', tools: weather, maxRetries: 0 });
  const calls = await stream.toolCalls;
  assert.equal(calls.length, 1);
  assert.equal(calls[0].toolName, 'get_weather');
});

const forecast = jsonSchema({
  type: 'object',
  properties: {
    city: { type: 'string' },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
  },
  required: ['city', 'days', 'unit'],
  additionalProperties: false,
});

test('tool calls a request forces, on chat completions too, with input that fits the schema', async () => {
  // No fault: the request's own tool_choice forces the call, as a provider's would.
  for (const model of [openai.chat('chat-only'), openai.chat('claude'), anthropic('claude')]) {
    const { toolCalls, finishReason } = await generateText({
      model, prompt: 'Forecast for Paris', maxRetries: 0, toolChoice: 'required',
      tools: { forecast: tool({ description: 'A forecast', inputSchema: forecast }) },
    });
    assert.equal(toolCalls.length, 1, model.modelId);
    assert.equal(toolCalls[0].toolName, 'forecast');
    assert.deepEqual(toolCalls[0].input, { city: 'value', days: 1, unit: 'celsius' });
    assert.equal(finishReason, 'tool-calls');
  }
  // generateObject through Anthropic: a forced tool whose input the SDK validates.
  const { object } = await generateObject({ model: anthropic('chat-only'), schema: forecast,
                                            prompt: 'Forecast for Paris', maxRetries: 0 });
  assert.deepEqual(object, { city: 'value', days: 1, unit: 'celsius' });
});

test('the SDK\'s own retries (no retry header) cost one upstream call each, not a chain each', async () => {
  // Every call is a 429. The gateway tries 4 times (retry.max_attempts); the SDK, which ignores
  // x-should-retry and sends no retry header, comes back twice with the same request: each
  // comes back a retry, served with one attempt and no waits.
  await mock.scenario([{ match: { model: 'limited-model' }, fault: 'status=429' }]);
  try {
    const calls = async (maxRetries) => {
      await mock.reset();
      await assert.rejects(generateText({ model: openai.chat('limited'), maxRetries,
                                          prompt: `limited ${maxRetries}` }));
      return (await mock.stats()).total;
    };
    const alone = await calls(0);
    const withRetries = await calls(2);
    console.log(`# upstream calls for a persistent 429: maxRetries 0: ${alone}, 2: ${withRetries}`);
    assert.equal(alone, 4);
    assert.ok(withRetries <= alone + 2, `${withRetries} upstream calls`);
  } finally {
    await mock.scenario([{ match: { model: 'tools-native' }, fault: 'tool_use=1' },
                         { match: { model: 'tools-claude' }, fault: 'tool_use=1' }]);
  }
});
