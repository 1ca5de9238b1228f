// useLike: a unique counter's count and the signed-in user's like, as `watchMember` shows them (exact and
// optimistic), for the user signed in to the client's Firebase app, followed through sign-in and sign-out;
// and like, unlike and toggle. Signed out, the count is the counter's total (`watch`), liked is false, and
// a tap rejects with the client's SignInRequiredError before anything is sent.
import { useMemo, useSyncExternalStore } from "react";
import type { CounterClient } from "../client.js";
import { SignInRequiredError } from "../failure.js";
import { internalsOf } from "../internals.js";
import type { SetMemberOutcome } from "../membership.js";
import { userStore, type UserStore } from "./auth.js";
import { useClient } from "./context.js";
import { optionsProblem, pendingStore, watchStore, type Loaded, type Store } from "./store.js";

export interface UseLikeOptions {
  /** The server's AUTO_CREATE makes the counter on its first like: 0 until then, not an error. */
  autoCreated?: boolean;
  /** The client to use instead of the <CounterClientProvider>'s. */
  client?: CounterClient;
}

type Like = { liked: boolean; count: number };

export type UseLikeResult = Loaded<Like> & {
  /** setMember(counterId, true): shown at once; taps go out one at a time, the last one decides. */
  like: () => Promise<SetMemberOutcome>;
  /** setMember(counterId, false). */
  unlike: () => Promise<SetMemberOutcome>;
  /** Likes or unlikes, the opposite of the like shown now (rejects while it is not known). */
  toggle: () => Promise<SetMemberOutcome>;
};

const OPTIONS = ["autoCreated", "client"];

/**
 * `{ status, data: { liked, count }, error, like, unlike, toggle }` of the unique counter `counterId` for
 * the user signed in to the client's Firebase app: "pending" until Auth and the counter are known, then
 * "success", or "error" as for useCounter.
 */
export function useLike(counterId: string, options?: UseLikeOptions): UseLikeResult {
  const hook = `useLike(${counterId})`;
  const client = useClient(hook, options?.client);
  const problem = optionsProblem(hook, options, OPTIONS);
  const autoCreated = options?.autoCreated;
  const users = useMemo(() => userStore(appOf(client)), [client]);
  const uid = useSyncExternalStore(users.subscribe, users.getSnapshot, users.getServerSnapshot);
  const store = useMemo((): Store<Like> => {
    if (uid === undefined) return pendingStore;
    return watchStore<Like>((show, fail) => {
      if (problem !== undefined) throw new TypeError(problem);
      const watchOptions = autoCreated !== undefined ? { autoCreated } : {};
      if (uid === null) return client.watch(counterId, (count) => show(count === null ? null : { liked: false, count }), fail, watchOptions);
      return client.watchMember(counterId, uid, (count, view) => show(count === null ? null : { liked: view.member, count }), fail, watchOptions);
    });
  }, [client, counterId, uid, autoCreated, problem]);
  const state = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getServerSnapshot);
  const actions = useMemo(() => likeActions(client, counterId, users, store), [client, counterId, users, store]);
  return useMemo(() => ({ ...state, ...actions }), [state, actions]);
}

/** The Firebase app of the client (its Firestore's): whose signed-in user likes. */
function appOf(client: CounterClient) {
  const internals = internalsOf(client);
  if (internals === undefined) throw new TypeError("useLike: the client must be one that createCounterClient made");
  return internals.firestore.app;
}

function likeActions(client: CounterClient, counterId: string, users: UserStore, store: Store<Like>): Pick<UseLikeResult, "like" | "unlike" | "toggle"> {
  /** Sends the tap now when the user is known (so that a second tap sees the first one's like), else once Auth tells. */
  const tap = (call: string, member: () => boolean | Error): Promise<SetMemberOutcome> => {
    const uid = users.getSnapshot();
    if (uid === undefined) return users.ready().then(() => tap(call, member));
    if (uid === null) {
      const reason = "a like is the signed-in user's, and no user is signed in to the client's Firebase app";
      return Promise.reject(new SignInRequiredError(counterId, `useLike(${counterId}).${call}()`, reason));
    }
    const wanted = member();
    return wanted instanceof Error ? Promise.reject(wanted) : client.setMember(counterId, wanted);
  };
  return {
    like: () => tap("like", () => true),
    unlike: () => tap("unlike", () => false),
    toggle: () =>
      tap("toggle", () => {
        const shown = store.getSnapshot();
        if (shown.status === "success") return !shown.data.liked;
        return new Error(`useLike(${counterId}).toggle(): the like is not known yet (status "${shown.status}"): use like() or unlike(), or wait for "success"`);
      }),
  };
}
