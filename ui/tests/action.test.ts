import { describe, expect, it } from 'vitest';

import { action } from '../src/lib/action.svelte';

describe('action', () => {
  it('is busy with its input while it runs, and ignores a second run meanwhile', async () => {
    let finish!: () => void;
    let runs = 0;
    const save = action((_id: number) => {
      runs += 1;
      return new Promise<void>((resolve) => (finish = resolve));
    });
    const first = save.run(7);
    expect(save.busy).toBe(true);
    expect(save.busyWith).toBe(7);
    await save.run(8);
    expect(runs).toBe(1);
    finish();
    await first;
    expect(save.busy).toBe(false);
    expect(save.busyWith).toBeNull();
    expect(save.error).toBeNull();
  });

  it("keeps a command's error as it came, until the next run", async () => {
    const refusal = { code: 'insufficient_stock', message: 'Rex (#1) has 1 in stock; 3 more were asked for', status: 409 };
    let fail = true;
    const place = action(async () => {
      if (fail) throw refusal;
    });
    await place.run();
    expect(place.error).toBe(refusal);
    expect(place.busy).toBe(false);
    fail = false;
    await place.run();
    expect(place.error).toBeNull();
  });

  it('throws on what no command rejected with: a bug is not shown as the app speaking', async () => {
    const broken = action(async () => {
      throw new TypeError('x is undefined');
    });
    await expect(broken.run()).rejects.toThrow('x is undefined');
    expect(broken.error).toBeNull();
    expect(broken.busy).toBe(false);
  });
});
