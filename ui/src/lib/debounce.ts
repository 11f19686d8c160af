/**
 * Calls `fn` once, `ms` after the last of a burst of calls (typing, a flurry of change
 * events). `cancel` drops a pending call, e.g. when the component that wanted it goes away.
 */
export function debounce<A extends unknown[]>(fn: (...args: A) => void, ms: number) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const debounced = (...args: A) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
  debounced.cancel = () => clearTimeout(timer);
  return debounced;
}
