// A pool of promises: what the benchmark's workloads and the tests' clients share to keep a fixed number
// of calls in flight against the emulators.

/** Runs `tasks` with at most `limit` in flight. */
export async function withConcurrency<T>(limit: number, tasks: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array<T>(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, tasks.length) }, async () => {
      while (next < tasks.length) {
        const i = next++;
        results[i] = await tasks[i]!();
      }
    }),
  );
  return results;
}
