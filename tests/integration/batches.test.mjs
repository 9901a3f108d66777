// Batch jobs the gateway runs itself (docs/batches.md#how-a-job-runs-on-the-gateway), against real processes:
// a `kill -9` in the middle of a job and a restart — the job completes with every custom_id once,
// and at most the lines in flight ran twice; a batch on a deployment limited to 120 RPM leaves
// interactive requests their latency and sends no request the provider would refuse; a large
// file runs with bounded memory (BATCH_LINES lines, 5,000 unless set: `BATCH_LINES=50000` for the
// figure in docs/batches.md).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startMock, startGateway, request, eventually, tempDir } from './harness.mjs';

const MASTER = 'test-master-key-batch-runs-01';
let mock;
const running = [];

before(async () => {
  mock = await startMock();
});

after(async () => {
  for (const g of running) if (g.child.exitCode === null) g.child.kill('SIGKILL');
  await mock.stop();
});

async function start(yaml, dataDir, env = {}) {
  const gateway = await startGateway(yaml, { dataDir, env: { MASTER, ...env } });
  running.push(gateway);
  return gateway;
}

const config = (models, extra = '') => `
server: {master_key: os.environ/MASTER}
retry: {base_ms: 5, cap_ms: 20}
${extra}
models:
${models}`;

const auth = { authorization: `Bearer ${MASTER}` };

function lines(n, model, prefix) {
  return Array.from({ length: n }, (_, i) => JSON.stringify({
    custom_id: `${prefix}-${i}`, method: 'POST', url: '/v1/chat/completions',
    body: { model, messages: [{ role: 'user', content: `line ${i}` }] },
  })).join('\n') + '\n';
}

async function upload(gateway, text) {
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([text]), 'input.jsonl');
  const r = await fetch(`${gateway.base}/v1/files`, { method: 'POST', body: form, headers: auth });
  assert.equal(r.status, 200, await r.clone().text());
  return (await r.json()).id;
}

async function createBatch(gateway, fileId, window = '24h') {
  const r = await request(gateway.port, {
    path: '/v1/batches', headers: auth,
    body: { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: window },
  });
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body).id;
}

async function batchOf(gateway, id) {
  const r = await request(gateway.port, { method: 'GET', path: `/v1/batches/${id}`, headers: auth });
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body);
}

const ended = (gateway, id, timeoutMs) => eventually(async () => {
  const b = await batchOf(gateway, id);
  return ['completed', 'failed', 'expired', 'cancelled'].includes(b.status) && b;
}, { what: `batch ${id} to end`, timeoutMs, intervalMs: 100 });

async function content(gateway, fileId) {
  const r = await fetch(`${gateway.base}/v1/files/${fileId}/content`, { headers: auth });
  assert.equal(r.status, 200);
  return (await r.text()).split('\n').filter((l) => l).map((l) => JSON.parse(l));
}

test('kill -9 during a 30-line batch: after a restart it completes, each custom_id once', async () => {
  await mock.scenario([{ match: { model: 'resume-model' }, fault: 'delay_headers_ms=300' }]);
  const dataDir = tempDir();
  const models = `  - name: resume
    deployments: [{provider: openai, model: resume-model, api_base: "${mock.base}/v1"}]
`;
  let gateway = await start(config(models), dataDir);
  const id = await createBatch(gateway, await upload(gateway, lines(30, 'resume', 'r')));
  let written = 0;  // lines whose results were on disk, at least, when the kill came
  await eventually(async () => (written = (await batchOf(gateway, id)).request_counts.completed) >= 10,
                   { what: 'ten lines to finish', timeoutMs: 20000, intervalMs: 50 });
  gateway.child.kill('SIGKILL');
  await gateway.exited();
  const sentBeforeKill = (await mock.stats()).requests.filter((r) => r.model === 'resume-model').length;
  gateway = await start(config(models), dataDir);
  await eventually(() => /resuming 1 job/.test(gateway.stderr()), { what: 'the job to resume' });
  const batch = await ended(gateway, id, 30000);
  assert.equal(batch.status, 'completed');
  assert.deepEqual(batch.request_counts, { total: 30, completed: 30, failed: 0 });
  const output = await content(gateway, batch.output_file_id);
  assert.equal(output.length, 30);
  assert.deepEqual(output.map((l) => l.custom_id).sort(),
                   Array.from({ length: 30 }, (_, i) => `r-${i}`).sort());
  // A line may run twice only if its result was not on disk at the kill (in flight, or ended
  // with its write still to come); no written line runs again.
  const sent = (await mock.stats()).requests.filter((r) => r.model === 'resume-model').length;
  assert.ok(sent >= 30 && sent - 30 <= sentBeforeKill - written,
            `${sent} requests upstream for 30 lines; ${sentBeforeKill} sent before the kill, ${written} written`);
  await gateway.stop();
});

test('a 40-line batch at 120 RPM leaves interactive requests their latency, and no upstream 429', async () => {
  await mock.scenario([]);
  await fetch(`${mock.base}/mock/limits`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rpm: 120 }),
  });
  await mock.reset();
  try {
    const gateway = await start(config(`  - name: shared
    deployments: [{provider: openai, model: shared-model, api_base: "${mock.base}/v1", limits: {rpm: 120}}]
`));
    const id = await createBatch(gateway, await upload(gateway, lines(40, 'shared', 's')));
    // The batch takes what interactive traffic leaves: one interactive request a second
    // meanwhile, on the same deployment.
    const latencies = [];
    for (let i = 0; i < 15; ++i) {
      const started = Date.now();
      const r = await request(gateway.port, {
        headers: auth, body: { model: 'shared', messages: [{ role: 'user', content: `interactive ${i}` }] },
      });
      assert.equal(r.status, 200, r.body);
      latencies.push(Date.now() - started);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (Date.now() - started))));
    }
    latencies.sort((a, b) => a - b);
    const median = latencies[Math.floor(latencies.length / 2)];
    const progress = (await batchOf(gateway, id)).request_counts.completed;
    assert.ok(progress > 0, 'the batch made progress meanwhile');
    const batch = await ended(gateway, id, 90000);
    assert.deepEqual(batch.request_counts, { total: 40, completed: 40, failed: 0 });
    const stats = await mock.stats();
    console.log(`interactive median ${median} ms (max ${latencies.at(-1)} ms); batch lines done ` +
                `meanwhile ${progress}; upstream 429s ${stats.rate_limited.total}`);
    assert.ok(median <= 1500, `interactive median ${median} ms`);
    assert.equal(stats.rate_limited.total, 0, 'no request the provider refused');
    await gateway.stop();
  } finally {
    await fetch(`${mock.base}/mock/limits`, { method: 'DELETE' });
  }
});

// Peak resident memory of a process (VmHWM), in MiB.
const peakMiB = (pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const residentMiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

test('a large file is accepted and run with bounded memory', async () => {
  await mock.scenario([]);
  const n = Number(process.env.BATCH_LINES ?? 5000);
  // Under AddressSanitizer freed memory waits in a quarantine (256 MiB by default) before reuse,
  // which would read as growth: a small one here.
  const asan = [process.env.ASAN_OPTIONS, 'quarantine_size_mb=8'].filter(Boolean).join(':');
  const gateway = await start(config(`  - name: bulk
    deployments: [{provider: openai, model: bulk-model, api_base: "${mock.base}/v1"}]
`, 'batches: {max_lines: 100000, max_file_bytes: 67108864}\nlog: {access: "off"}'), undefined,
                              { ASAN_OPTIONS: asan });
  const text = lines(n, 'bulk', 'b');
  const id = await createBatch(gateway, await upload(gateway, text));
  const before = residentMiB(gateway.child.pid);
  const started = Date.now();
  const batch = await ended(gateway, id, 600000);
  const seconds = (Date.now() - started) / 1000;
  const after = residentMiB(gateway.child.pid);
  assert.deepEqual(batch.request_counts, { total: n, completed: n, failed: 0 });
  const output = await content(gateway, batch.output_file_id);
  assert.equal(new Set(output.map((l) => l.custom_id)).size, n);
  console.log(`${n} lines (${(text.length / 1048576).toFixed(1)} MiB) in ${seconds.toFixed(1)} s; ` +
              `RSS ${before.toFixed(1)} MiB after the upload, ${after.toFixed(1)} MiB at the end, ` +
              `peak ${peakMiB(gateway.child.pid).toFixed(1)} MiB`);
  // The input is read as a stream and results go to the store as lines end: what the job holds
  // does not grow with its length.
  assert.ok(after - before < 48, `RSS grew by ${(after - before).toFixed(1)} MiB`);
  await gateway.stop();
});
