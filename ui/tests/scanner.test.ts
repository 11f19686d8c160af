import { describe, expect, it } from 'vitest';

import { ScanBuffer } from '../src/lib/scanner';

function feed(buffer: ScanBuffer, keys: string[], gap: number, start = 1000): (string | null)[] {
  return keys.map((k, i) => buffer.key(k, start + i * gap));
}

describe('ScanBuffer', () => {
  it('takes a quick burst ended by Enter as a scan', () => {
    const results = feed(new ScanBuffer(), [...'4000000000017', 'Enter'], 8);
    expect(results.at(-1)).toBe('4000000000017');
    expect(results.slice(0, -1).every((r) => r === null)).toBe(true);
  });

  it('leaves typing at a human pace alone', () => {
    expect(feed(new ScanBuffer(), [...'1234', 'Enter'], 140).at(-1)).toBeNull();
  });

  it('starts again after a pause, and ignores short bursts', () => {
    const buffer = new ScanBuffer();
    feed(buffer, [...'99'], 5, 0);
    expect(feed(buffer, [...'A-17', 'Enter'], 5, 2000).at(-1)).toBe('A-17');
    expect(feed(buffer, ['1', '2', 'Enter'], 5, 4000).at(-1)).toBeNull();
  });

  it('reads capitals typed with Shift, and drops a burst broken by another key', () => {
    expect(feed(new ScanBuffer(), ['Shift', 'A', '-', '1', '7', 'Enter'], 5).at(-1)).toBe('A-17');
    expect(feed(new ScanBuffer(), ['1', '2', 'Tab', '3', '4', 'Enter'], 5).at(-1)).toBeNull();
  });
});
