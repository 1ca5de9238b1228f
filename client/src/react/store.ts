// What a hook shows, over the client's own callbacks: a tiny store per hook for React's
// useSyncExternalStore. Subscribing starts the client's watch (the client's registry shares one set of
// listeners among every watch of a counter), unsubscribing stops it; React subscribes in an effect and
// unsubscribes when the component goes (strict mode's extra subscribe and unsubscribe included), so no
// listener outlives its component. On a server React never subscribes: it shows `getServerSnapshot`,
// "pending", and nothing is opened.

/** `{ status, data, error }`, as reactfire and TanStack Query return it. */
export type Loaded<Data> =
  /** Not known yet: before the first value (and always on a server). */
  | { status: "pending"; data: undefined; error: undefined }
  | { status: "success"; data: Data; error: undefined }
  /** The listener failed, or there is no value to show (a counter that does not exist: a CounterNotFoundError). */
  | { status: "error"; data: undefined; error: Error };

/** The status of a hook's result. */
export type HookStatus = Loaded<unknown>["status"];

export const PENDING = Object.freeze({ status: "pending", data: undefined, error: undefined }) as Loaded<never>;

export interface Store<Data> {
  subscribe: (onChange: () => void) => () => void;
  getSnapshot: () => Loaded<Data>;
  getServerSnapshot: () => Loaded<Data>;
}

/**
 * A store over one watch. `open(show, fail)` starts the watch and returns its stop: `show(data)` is a
 * value to show (null: none, as `watch` shows a counter that does not exist), `fail(error)` its errors.
 * What `open` throws (a bad argument, which the client refuses before listening) is the store's error.
 */
export function watchStore<Data>(open: (show: (data: Data | null) => void, fail: (error: Error) => void) => () => void): Store<Data> {
  let current: Loaded<Data> = PENDING;
  return {
    subscribe(onChange) {
      let active = true;
      const set = (next: Loaded<Data>) => {
        if (!active || next === current) return;
        current = next;
        onChange();
      };
      // Null is told before the error that explains it (a missing counter), or after it (a window the
      // counter does not have): an error stays until a value replaces it.
      const show = (data: Data | null) => set(data !== null ? { status: "success", data, error: undefined } : current.status === "error" ? current : PENDING);
      const fail = (error: Error) => set({ status: "error", data: undefined, error });
      let stop: () => void;
      try {
        stop = open(show, fail);
      } catch (error) {
        fail(error instanceof Error ? error : new Error(String(error)));
        stop = () => undefined;
      }
      return () => {
        active = false;
        stop();
        // A later subscriber starts from nothing known, not from a value this watch showed.
        current = PENDING;
      };
    },
    getSnapshot: () => current,
    getServerSnapshot: () => PENDING,
  };
}

/** A store that shows "pending" and opens nothing (useLike before the user is known). */
export const pendingStore: Store<never> = {
  subscribe: () => () => undefined,
  getSnapshot: () => PENDING,
  getServerSnapshot: () => PENDING,
};

/** Why a hook's options are not an object of the known keys, or undefined. */
export function optionsProblem(hook: string, options: unknown, keys: string[]): string | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== "object" || options === null) return `${hook}: options must be an object or undefined`;
  const unknown = Object.keys(options).find((key) => !keys.includes(key));
  return unknown === undefined ? undefined : `${hook}: options.${unknown.slice(0, 32)} is not an option (the options are ${keys.join(", ")})`;
}
