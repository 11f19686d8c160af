// Scenario 6: how long the app takes from its process start to the first screen, and how
// much memory it holds then (the app and its WebKit processes, resident set sizes from
// /proc). Printed as startup_ms=... and memory_mb=..., and written to target/e2e/metrics.txt.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import {
  ARTIFACTS,
  TEST_TIMEOUT_MS,
  appProcesses,
  launchApp,
  sel,
  startedAtMsSinceBoot,
  waitForText,
  waitVisible,
} from './helpers.js';

test('startup time and memory', { timeout: TEST_TIMEOUT_MS }, async () => {
  const app = await launchApp('metrics');
  try {
    // launchApp noted when the Pets heading became visible (polled every 25 ms).
    const startupMs = Math.round(app.timings.firstScreenMsSinceBoot - startedAtMsSinceBoot(app.appPid));
    const sessionMs = app.timings.firstScreenAt - app.timings.sessionRequestedAt;

    // Memory once the first screen has its data and the status bar its answer.
    await waitVisible(app.browser, sel('empty-state'));
    await waitForText(app.browser, 'status-reachable', 'Reachable');
    const procs = appProcesses(app);
    const bytes = procs.reduce((sum, p) => sum + p.rss, 0);
    const memoryMb = Math.round((bytes / 1024 / 1024) * 10) / 10;
    const breakdown = procs.map((p) => `${p.comm}:${Math.round(p.rss / 1024 / 1024)}`).join(',');

    assert.ok(procs.some((p) => /WebKitWebProces/.test(p.comm)), `no WebKit web process under the app: ${breakdown}`);
    assert.ok(startupMs > 0 && startupMs < 30_000, `startup_ms=${startupMs}`);
    assert.ok(memoryMb > 10, `memory_mb=${memoryMb}`);

    const lines = [
      `startup_ms=${startupMs}`,
      `memory_mb=${memoryMb}`,
      `session_to_first_screen_ms=${sessionMs}`,
      `processes=${breakdown}`,
      `binary=${path.basename(process.env.APP_BIN ?? 'petstore-desktop')}`,
    ];
    for (const line of lines) console.log(line);
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    fs.writeFileSync(path.join(ARTIFACTS, 'metrics.txt'), `${lines.join('\n')}\n`);
  } finally {
    await app.close();
  }
});
