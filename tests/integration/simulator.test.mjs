// The simulator cannot drift from the product: each cross-check scenario of docs/evidence/scenarios
// runs in switchyard-sim (40 seeds) and, here, through the real gateway and the mock over loopback,
// and the live run must look like one of the simulated ones: each figure within the range the
// seeds gave, widened by a stated margin.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startMock, startGateway, request, sleep } from './harness.mjs';

const SIM = process.env.SWITCHYARD_SIM_BIN;
const HERE = path.dirname(fileURLToPath(import.meta.url));
const SCENARIOS = path.join(HERE, '../../docs/evidence/scenarios');
const SEEDS = 40;
// How far outside the simulated seeds' range a live figure may fall: 15 % of the range's larger
// end (timers on a loaded 2-core machine are not a virtual clock), at least 50 ms for a latency;
// counts of requests and of 429s must be exact, availability within 2 percentage points.
const MARGIN = 0.15;
const FLOOR = { mean_ok_ms: 50 };
const EXACT_SLACK = { requests: 0, upstream_429: 0, availability_pct: 2 };

function simulate(file) {
  const runs = [];
  for (let seed = 1; seed <= SEEDS; seed++) {
    const out = execFileSync(SIM, [file, '--seed', String(seed), '--runs', '1', '--json']);
    runs.push(JSON.parse(out)[0].figures);
  }
  return runs;
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

// Sends the scenario's client traffic to the gateway on its schedule (open loop) and returns
// the live figures, named as the simulator names them.
async function liveRun(spec) {
  const providers = Object.entries(spec.providers);
  const limited = providers.filter(([, p]) => p.limits !== '');
  assert.ok(limited.length <= 1, "the mock's rate limits are one set for all its models");
  const mock = await startMock(['--seed', '7', ...(limited.length ? ['--limits', limited[0][1].limits] : [])]);
  const rules = [];
  for (const [, provider] of providers) {
    for (const fault of provider.faults) {
      assert.ok(fault.from_s === 0 && fault.to_s === undefined,
                'the mock applies a fault for the whole run');
      rules.push({ match: { model: provider.model }, fault: fault.fault });
    }
  }
  if (rules.length) await mock.scenario(rules);
  const yaml = spec.gateway.replaceAll('http://mock.invalid', mock.base);
  const gateway = await startGateway(yaml, { env: { SIM_KEY: 'sk-sim' }, workers: 1 });
  try {
    assert.equal(spec.clients.length, 1);
    const client = spec.clients[0];
    assert.equal(client.arrival, 'uniform');
    assert.equal(client.layers, 0, 'the live client makes one HTTP request per request');
    const pending = [];
    const start = performance.now();
    for (let i = 1; ; i++) {
      const at = (client.start_s + i / client.rate_per_s) * 1000;
      if (at >= client.stop_s * 1000) break;
      const wait = start + at - performance.now();
      if (wait > 0) await sleep(wait);  // paced on purpose: the client's uniform arrivals
      const sent = performance.now();
      pending.push(request(gateway.port, {
        body: { model: client.model, max_tokens: client.max_tokens,
                messages: [{ role: 'user', content: 'hello' }] },
      }).then((answer) => ({ ...answer, ms: performance.now() - sent })));
    }
    const answers = await Promise.all(pending);
    const stats = await mock.stats();
    const n = answers.length;
    const ok = answers.filter((a) => a.status === 200);
    const live = {
      requests: n,
      availability_pct: (100 * ok.length) / n,
      upstream_per_request: stats.total / n,
      upstream_429: stats.rate_limited.total,
      mean_ok_ms: ok.reduce((sum, a) => sum + a.ms, 0) / ok.length,
      p50_ok_ms: percentile(ok.map((a) => a.ms), 0.5),
      p99_ok_ms: percentile(ok.map((a) => a.ms), 0.99),
    };
    for (const [name, provider] of providers) {
      live[`calls.${name}`] = stats.models[provider.model] ?? 0;
    }
    return live;
  } finally {
    await gateway.stop();
    await mock.stop();
  }
}

function compare(live, simulated, figures) {
  const lines = [];
  const outside = [];
  for (const name of figures) {
    const values = simulated.map((f) => f[name]);
    assert.ok(values.every((v) => typeof v === 'number'), `the simulator reports ${name}`);
    const low = Math.min(...values);
    const high = Math.max(...values);
    const slack = EXACT_SLACK[name] ??
                  Math.max(MARGIN * Math.max(Math.abs(low), Math.abs(high)), FLOOR[name] ?? 0);
    const fits = live[name] >= low - slack && live[name] <= high + slack;
    lines.push(`${name}: live ${live[name].toFixed(3)}, simulated ${low.toFixed(3)}..` +
               `${high.toFixed(3)} (±${slack.toFixed(3)})${fits ? '' : '  <-- outside'}`);
    if (!fits) outside.push(name);
  }
  console.log(lines.map((l) => `# ${l}`).join('\n'));
  assert.deepEqual(outside, [], lines.join('\n'));
}

for (const [file, figures, check] of [
  // Retries, backoff, the cooldown, the breaker and the fallback chain. calls.primary spreads
  // widely over seeds (a streak of failures opens the breaker for a while); the calls per request
  // and the availability are tight.
  ['crosscheck.yaml',
   ['requests', 'availability_pct', 'upstream_per_request', 'calls.primary', 'calls.secondary'],
   (live) => assert.ok(live['calls.primary'] > 10 && live['calls.secondary'] > 10)],
  // Headroom: held until it fits, never a 429, served at the provider's rate. The mean latency is
  // compared, not percentiles: requests waiting for the same token are woken in timer order,
  // which a virtual clock keeps and a real one shuffles, so which request waits longest differs
  // (live medians of 1.2 to 2.5 s against simulated ones of 2.5 to 2.7 s), while the upstream
  // calls keep the same pace and so the same mean.
  ['crosscheck-limits.yaml',
   ['requests', 'availability_pct', 'upstream_per_request', 'upstream_429', 'mean_ok_ms'],
   (live) => assert.ok(live.p99_ok_ms > 1000, 'the burst waited for headroom')],
]) {
  test(`the simulator and the real gateway agree on ${file}`, async () => {
    assert.ok(SIM, 'SWITCHYARD_SIM_BIN names the simulator');
    const scenario = path.join(SCENARIOS, file);
    const spec = JSON.parse(execFileSync(SIM, [scenario, '--describe']));
    const simulated = simulate(scenario);
    const live = await liveRun(spec);
    compare(live, simulated, figures);
    check(live);
  });
}
