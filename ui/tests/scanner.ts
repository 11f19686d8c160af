import { fireEvent } from '@testing-library/svelte';

/**
 * A USB scanner: the code's keys 5 ms apart, then Enter, outside any field. The times are
 * the events' own (`timeStamp`), not the clock's, so a busy machine running the tests in
 * parallel cannot stretch the burst past the scanner's 50 ms gap and make it a person's.
 */
export function scan(code: string) {
  const start = performance.now();
  [...code, 'Enter'].forEach((key, i) => {
    const event = new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true });
    Object.defineProperty(event, 'timeStamp', { value: start + i * 5 });
    fireEvent(document.body, event);
  });
}
