/** `promise`, or a rejection once `limitMs` have passed without it settling: a hang fails the test instead of stalling it. */
export function settlesWithin<T>(promise: Promise<T>, limitMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${limitMs} ms`)), limitMs);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
