// The live dashboard (GET /dashboard) in a real browser: Debian's chromium, headless, driven by
// puppeteer-core (which never downloads a browser of its own). A gateway in front of the mock
// serves two model groups and two client keys; failures injected at the mock bench one
// deployment, and the page must show it cooling, then healthy again, show a spend-cap disable
// and clear it with its Re-enable button, and agree with /status read by the test at the same
// time. The page must log no error or warning, must never show the master key, and must fit a
// 375 px wide phone screen.
//
// SWITCHYARD_SCREENSHOT=1 also saves docs/images/dashboard.png (1280x900, with a deployment
// cooling, failed attempts and client keys); without it the file is left alone.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import puppeteer from 'puppeteer-core';
import {
  startMock, startGateway, request, sleep, eventually, tempDir,
} from '../integration/harness.mjs';

const MASTER = 'sk-master-dashboard-test-0001';
const CHAT_APP_KEY = 'sk-chat-app-dashboard-0001';
const BACKFILL_KEY = 'sk-backfill-dashboard-0001';
const SCREENSHOT = process.env.SWITCHYARD_SCREENSHOT === '1';
const SCREENSHOT_PATH = fileURLToPath(new URL('../../docs/images/dashboard.png', import.meta.url));
const WAIT = { timeout: 10_000 };

let mock;
let gateway;
let browser;
let page;
let flaky;       // the deployment the test makes fail, named by the gateway: model@host:port
let haiku;       // the Anthropic deployment, alone in its group
let traffic;     // stops the background traffic
const problems = [];      // console errors and warnings, uncaught page errors, failed requests
let refusalsExpected = false;

before(async () => {
  mock = await startMock();
  const api = `http://127.0.0.1:${mock.port}/v1`;
  flaky = `gpt-4o-mini@127.0.0.1:${mock.port}`;
  haiku = `claude-haiku-4-5@127.0.0.1:${mock.port}`;
  // One failure is allowed; the second benches the deployment for 5 s. The client keys have
  // limits, so /status counts their usage; the backfill key has no token limit or budget.
  // A scheduled fallback drill of a chain whose fallback entry's model is gone (404): it runs
  // once as the gateway starts, and the page's drills table shows the failing entry.
  const cases = path.join(tempDir(), 'cases.jsonl');
  writeFileSync(cases, `${JSON.stringify({ id: 'greets', request: { messages: [{ role: 'user', content: 'hi' }] }, expect: { contains: 'Mock reply' } })}\n`);
  await mock.scenario([{ match: { model: 'drill-gone' }, fault: 'error=model_not_found' }]);
  gateway = await startGateway(`
server: {master_key: os.environ/DASHBOARD_MASTER_KEY}
drills:
  - {group: drilled, cases: ${cases}, every: 1h}
retry: {base_ms: 10, cap_ms: 50}
health: {allowed_fails: 1, allowed_failure_rate: 0, cooldown_ms: 5000}
keys:
  - {name: chat-app, key: os.environ/CHAT_APP_KEY, rpm: 900, tpm: 200000, monthly_budget: 5}
  - {name: backfill, key: os.environ/BACKFILL_KEY, rpm: 600, lane: batch}
models:
  - name: gpt-4o-mini
    strategy: priority
    deployments:
      - {provider: openai, model: gpt-4o-mini, api_base: "${api}",
         input_price: 0.15, output_price: 0.6}
      - {name: mini-backup, provider: openai, model: gpt-4o-mini-2024-07-18, api_base: "${api}",
         input_price: 0.15, output_price: 0.6, limits: {rpm: 600, tpm: 100000}}
  - name: claude-haiku
    deployments:
      - {provider: anthropic, model: claude-haiku-4-5, api_base: "${api}",
         input_price: 1, output_price: 5}
  - name: drilled
    deployments: [{name: drill-ok, provider: openai, model: drill-ok, api_base: "${api}"}]
    fallbacks: [drilled-fallback]
  - name: drilled-fallback
    deployments: [{name: drill-gone, provider: openai, model: drill-gone, api_base: "${api}"}]
`, { env: { DASHBOARD_MASTER_KEY: MASTER, CHAT_APP_KEY, BACKFILL_KEY } });

  browser = await puppeteer.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--headless=new'],
  });
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  page.on('console', (message) => {
    if (!['error', 'warn', 'warning'].includes(message.type())) return;
    // A wrong key makes the browser log the 401s it got; the test enters one on purpose.
    if (refusalsExpected && /status of 401/.test(message.text())) return;
    problems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (req) => {
    // A reload cancels the poll in progress; that is the test's doing, not the page's.
    if (req.failure()?.errorText === 'net::ERR_ABORTED') return;
    problems.push(`request failed: ${req.method()} ${req.url()} ${req.failure()?.errorText}`);
  });
});

after(async () => {
  await traffic?.();
  // The browser goes first, so its last polls do not fail against a stopped gateway.
  await browser?.close();
  await gateway?.stop();
  await mock?.stop();
});

const chat = (key, model, extra = {}) => request(gateway.port, {
  headers: { authorization: `Bearer ${key}` },
  body: { model, messages: [{ role: 'user', content: 'Hello, dashboard' }], ...extra },
});

async function status() {
  const res = await request(gateway.port, { method: 'GET', path: '/status',
                                            headers: { authorization: `Bearer ${MASTER}` } });
  assert.equal(res.status, 200, res.body);
  return JSON.parse(res.body);
}

const deployment = (s, name) => s.deployments.find((d) => d.name === name);

async function waitForStatus(what, predicate) {
  let s;
  await eventually(async () => predicate(s = await status()),
                   { what: `${what} in /status`, timeoutMs: WAIT.timeout, intervalMs: 50 });
  return s;
}

// Both client keys keep calling both groups until the returned function is called, so the
// rates, sparklines and key usage have something to show.
function startTraffic() {
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      await Promise.all([
        chat(CHAT_APP_KEY, 'gpt-4o-mini', { max_tokens: 50 }),
        chat(BACKFILL_KEY, 'claude-haiku', { max_tokens: 50, stream: i % 2 === 0 }),
      ]);
      await sleep(150);  // paced on purpose: steady background traffic, not a flood
    }
  })();
  return async () => {
    running = false;
    await loop;
  };
}

const card = (name) => `[data-deployment="${name}"]`;
const textOf = (selector) => page.$eval(selector, (e) => e.textContent);
const hiddenOf = (selector) => page.$eval(selector, (e) => e.hidden);

async function badgeState(name) {
  return page.$eval(`${card(name)} [data-testid="state-badge"]`, (badge) => badge.dataset.state);
}

// Waits up to 10 s for the page to show `state` on the deployment's badge.
async function waitForBadge(name, state) {
  try {
    await page.waitForFunction(
      (selector, wanted) => document.querySelector(selector)?.dataset.state === wanted, WAIT,
      `${card(name)} [data-testid="state-badge"]`, state);
  } catch (error) {
    const shown = await badgeState(name).catch(() => 'no card');
    throw new Error(`${name}: badge shows '${shown}', not '${state}' after 10 s: ${error.message}`);
  }
}

// What the page shows, in the shape of /status.
function readPage() {
  const value = (root, testid) => root.querySelector(`[data-testid="${testid}"]`)?.dataset.value;
  const deployments = {};
  for (const c of document.querySelectorAll('[data-deployment]')) {
    deployments[c.dataset.deployment] = {
      state: c.querySelector('[data-testid="state-badge"]').dataset.state,
      in_flight: Number(value(c, 'in-flight')),
    };
  }
  const keys = {};
  for (const row of document.querySelectorAll('[data-testid="key-row"]')) {
    keys[row.dataset.key] = {
      requests_last_minute: Number(value(row, 'key-requests')),
      tokens_last_minute: Number(value(row, 'key-tokens')),
      spent_this_month: Number(value(row, 'key-spend')),
    };
  }
  const rows = document.querySelectorAll('[data-testid="failure-row"]');
  const newest = rows[0]?.querySelector('[data-testid="failure-upstream-id"]');
  return { deployments, keys, failures: rows.length, newest_failure: newest?.textContent ?? null };
}

function fromStatus(s) {
  return {
    deployments: Object.fromEntries(s.deployments.map((d) => [d.name, { state: d.state,
                                                                       in_flight: d.in_flight }])),
    keys: Object.fromEntries(s.keys.map(({ name, usage: u }) => [name, {
      requests_last_minute: u.requests_last_minute,
      tokens_last_minute: u.tokens_last_minute,
      spent_this_month: u.spent_this_month,
    }])),
    failures: s.recent_failures.length,
    newest_failure: s.recent_failures[0]?.upstream_request_id ?? null,
  };
}

// The page polls once a second, so it may be a poll behind /status: compare until both agree,
// and fail with both if they still differ after 10 s. Returns what the page showed.
async function pageAgreesWithStatus(what) {
  let truth;
  let shown;
  await eventually(async () => {
    truth = fromStatus(await status());
    shown = await page.evaluate(readPage);
    return isDeepStrictEqual(shown, truth);
  }, { what, timeoutMs: WAIT.timeout, intervalMs: 200 }).catch(() => {});
  assert.deepEqual(shown, truth, `${what}: page and /status differ`);
  return shown;
}

test('the page asks for the master key, refuses a wrong one and connects with the right one', async () => {
  const res = await request(gateway.port, { method: 'GET', path: '/dashboard' });
  assert.equal(res.status, 200);
  assert.match(res.headers['content-security-policy'], /default-src 'none'/);

  await page.goto(`${gateway.base}/dashboard`);
  await page.waitForSelector('[data-testid="key-input"]', { visible: true, ...WAIT });

  refusalsExpected = true;
  await page.type('[data-testid="key-input"]', 'sk-not-the-master-key');
  await page.click('[data-testid="key-submit"]');
  await page.waitForFunction(
    () => /401/.test(document.querySelector('[data-testid="login-message"]').textContent), WAIT);
  assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'a refused key is not kept');
  refusalsExpected = false;

  await page.type('[data-testid="key-input"]', MASTER);
  await page.click('[data-testid="key-submit"]');
  await page.waitForFunction(
    () => document.querySelector('[data-testid="connection"]').dataset.conn === 'live', WAIT);
  for (const name of [flaky, 'mini-backup', haiku]) {
    await page.waitForSelector(card(name), WAIT);
    assert.equal(await badgeState(name), 'healthy', name);
  }
  const keys = await page.$$eval('[data-testid="key-row"]', (rows) => rows.map((r) => r.dataset.key));
  assert.deepEqual(keys, ['backfill', 'chat-app']);
  assert.equal(await page.$eval('[data-testid="key-input"]', (input) => input.value), '');
  const shown = await page.evaluate(
    () => document.documentElement.outerHTML + document.body.innerText);
  assert.ok(!shown.includes(MASTER), 'the master key is never displayed');
});

test('live traffic shows as request rates, sparklines and key usage', async () => {
  traffic = startTraffic();
  await page.waitForFunction(
    () => Number(document.querySelector('[data-testid="total-rps"]').dataset.value) > 0, WAIT);
  await page.waitForFunction(
    (selector) => Number(document.querySelector(selector)?.dataset.value) > 0, WAIT,
    `${card(haiku)} [data-testid="rps"]`);
  await page.waitForFunction(
    () => Number(document.querySelector('[data-testid="latency"]').dataset.value) > 0, WAIT);
  // A screenshot wants a minute-like history in its sparklines (the wait is the point there);
  // the test needs a drawn sparkline and the key's token meter.
  if (SCREENSHOT) await sleep(15_000);
  const drawn = (spark, tokens) =>
    /^M[\d.]+ [\d.]+/.test(document.querySelector(spark)?.getAttribute('d') ?? '') &&
    /no limit/.test(document.querySelector(tokens)?.textContent ?? '');
  await eventually(() => page.evaluate(drawn, `${card(flaky)} svg.spark path`,
                                       '[data-key="backfill"] [data-testid="key-tokens"]'),
                   { what: 'a sparkline and the key\'s token meter', timeoutMs: WAIT.timeout });
  const sparkline = await page.$eval(`${card(flaky)} svg.spark path`, (p) => p.getAttribute('d'));
  assert.match(sparkline, /^M[\d.]+ [\d.]+/);
  assert.match(await textOf('[data-key="backfill"] [data-testid="key-tokens"]'), /no limit/);
});

test('a failing deployment turns cooling, counts down, and is healthy again after its cooldown', async () => {
  // The traffic stops here even when a check fails, so that the next tests see a gateway at rest.
  try {
    await mock.scenario([{ match: { model: 'gpt-4o-mini' }, fault: 'status=500' }]);
    const s = await waitForStatus('cooling', (st) => deployment(st, flaky).state === 'cooling');
    // The background traffic no longer reaches it; once the cooldown ends it must serve again.
    await mock.scenario([]);
    await waitForBadge(flaky, 'cooling');
    assert.match(await textOf(`${card(flaky)} [data-testid="state-until"]`),
                 /^lifts in \d+(\.\d)? s$/);
    assert.equal(await hiddenOf(`${card(flaky)} [data-testid="reenable"]`), false);
    assert.ok(s.recent_failures.length >= 2);
    await page.waitForFunction(
      (n) => document.querySelectorAll('[data-testid="failure-row"]').length >= n, WAIT,
      s.recent_failures.length);

    if (SCREENSHOT) {
      mkdirSync(path.dirname(SCREENSHOT_PATH), { recursive: true });
      await page.screenshot({ path: SCREENSHOT_PATH });
      console.log(`# saved ${SCREENSHOT_PATH}`);
    }

    await waitForBadge(flaky, 'healthy');
    assert.equal(deployment(await status(), flaky).state, 'healthy');
    assert.equal(await hiddenOf(`${card(flaky)} [data-testid="reenable"]`), true);
  } finally {
    await traffic();
    traffic = null;
  }
});

test('the numbers on the page are the ones /status gives', async () => {
  const shown = await pageAgreesWithStatus('at rest');
  assert.ok(shown.keys['chat-app'].requests_last_minute > 0, JSON.stringify(shown.keys));
  assert.ok(shown.keys.backfill.requests_last_minute > 0, JSON.stringify(shown.keys));
  assert.ok(shown.failures >= 2);
  assert.match(shown.newest_failure, /^req_[0-9a-f]{32}$/);

  // One slow request keeps an attempt in flight for 5 s.
  await mock.scenario([{ match: { model: 'claude-haiku-4-5' }, fault: 'delay_headers_ms=5000',
                         times: 1 }]);
  const slow = chat(CHAT_APP_KEY, 'claude-haiku');
  await waitForStatus('an attempt in flight', (st) => deployment(st, haiku).in_flight === 1);
  const during = await pageAgreesWithStatus('one attempt in flight');
  assert.equal(during.deployments[haiku].in_flight, 1);
  assert.equal(await textOf('[data-testid="total-in-flight"]'), '1');
  assert.equal((await slow).status, 200);
  await mock.scenario([]);
  await pageAgreesWithStatus('after the slow request');
});

test('Re-enable clears a spend-cap disable', async () => {
  await mock.scenario([{ match: { model: 'gpt-4o-mini' }, fault: 'error=insufficient_quota' }]);
  assert.equal((await chat(CHAT_APP_KEY, 'gpt-4o-mini')).status, 200, 'served by the backup');
  await mock.scenario([]);
  assert.equal(deployment(await status(), flaky).state, 'disabled');
  await waitForBadge(flaky, 'disabled');
  assert.match(await textOf(`${card(flaky)} [data-testid="state-until"]`), /^until /,
               'a spend cap lasts until the 1st of next month');

  await page.click(`${card(flaky)} [data-testid="reenable"]`);
  await page.waitForFunction(
    (selector) => /^Re-enabled at /.test(document.querySelector(selector).textContent), WAIT,
    `${card(flaky)} [data-testid="reenable-result"]`);
  await waitForBadge(flaky, 'healthy');
  assert.equal(deployment(await status(), flaky).state, 'healthy');
  assert.equal(await page.$eval(`${card(flaky)} [data-testid="reenable-result"]`,
                                (e) => e.dataset.ok), 'true');
  await pageAgreesWithStatus('after re-enabling');
});

test('the scheduled drill shows each entry of its chain, the failing one marked', async () => {
  const row = (name) => `[data-testid="drill-row"][data-entry="${name}"]`;
  await page.waitForSelector(row('drill-gone'), WAIT);
  await page.waitForSelector(row('drill-ok'), WAIT);
  assert.equal(await page.$eval(row('drill-gone'), (r) => r.dataset.failing), '1');
  assert.equal(await textOf(`${row('drill-gone')} [data-testid="drill-result"]`), '1 failing');
  assert.equal(await page.$eval(row('drill-ok'), (r) => r.dataset.failing), '0');
  assert.equal(await textOf(`${row('drill-ok')} [data-testid="drill-result"]`), 'passed');
  assert.equal(await page.$eval(row('drill-gone'), (r) => r.dataset.group), 'drilled');
});

test('on a 375 px wide phone nothing overflows sideways', async () => {
  await page.setViewport({ width: 375, height: 800 });
  // A poll renders at the new width: one whose answer came after the resize.
  const resized = Date.now();
  const polledSince = (t) =>
    Date.parse(document.querySelector('[data-testid="last-update"]').getAttribute('datetime')) > t;
  await eventually(() => page.evaluate(polledSince, resized),
                   { what: 'a poll rendered at the new width', timeoutMs: WAIT.timeout });
  const widths = await page.evaluate(() => {
    const failures = document.querySelector('[data-testid="failures"]').closest('.table-wrap');
    return {
      page: document.documentElement.scrollWidth,
      body: document.body.scrollWidth,
      failuresTable: failures.scrollWidth,
      failuresBox: failures.clientWidth,
    };
  });
  assert.ok(widths.page <= 376 && widths.body <= 376, JSON.stringify(widths));
  assert.ok(widths.failuresTable > widths.failuresBox, 'the wide table scrolls inside its box');
  await page.setViewport({ width: 1280, height: 900 });
});

test('the key survives a reload and "forget key" drops it', async () => {
  await page.reload();
  await page.waitForFunction(
    () => document.querySelector('[data-testid="connection"]').dataset.conn === 'live', WAIT);
  assert.equal(await hiddenOf('[data-testid="login"]'), true);

  await page.click('[data-testid="forget-key"]');
  await page.waitForSelector('[data-testid="key-input"]', { visible: true, ...WAIT });
  assert.equal(await page.evaluate(() => sessionStorage.length), 0);
  assert.equal(await page.$$eval('[data-deployment]', (cards) => cards.length), 0);
});

test('no console errors or warnings, page errors or failed requests', () => {
  assert.deepEqual(problems, []);
});
