// The user signed in to a client's Firebase app, as useLike follows it: one onAuthStateChanged per Auth
// instance while any hook watches it, shared by every hook. `undefined` until Auth has told its first
// state (it restores a persisted user asynchronously), then the uid, or null when nobody is signed in.
// Auth is looked up only when a hook subscribes or reads on the client, never on a server.
import type { FirebaseApp } from "firebase/app";
import { getAuth, onAuthStateChanged, type Auth } from "firebase/auth";

export interface UserStore {
  subscribe: (onChange: () => void) => () => void;
  /** The signed-in user's uid, null when signed out, undefined until Auth has told. */
  getSnapshot: () => string | null | undefined;
  getServerSnapshot: () => undefined;
  /** The uid (or null) once Auth has told its first state. */
  ready: () => Promise<string | null>;
}

interface AuthUsers {
  known: boolean;
  listeners: Set<() => void>;
  stop: (() => void) | undefined;
}

const byAuth = new WeakMap<Auth, AuthUsers>();

function usersOf(auth: Auth): AuthUsers {
  let users = byAuth.get(auth);
  if (users === undefined) {
    users = { known: false, listeners: new Set(), stop: undefined };
    byAuth.set(auth, users);
  }
  return users;
}

/** Once Auth has told a state, `currentUser` is the truth (it changes before listeners are told). */
function uidOf(auth: Auth, users: AuthUsers): string | null | undefined {
  return users.known ? (auth.currentUser?.uid ?? null) : undefined;
}

/** The user store of `app`'s Auth (the app's default Auth instance: getAuth(app)). */
export function userStore(app: FirebaseApp): UserStore {
  const auth = () => getAuth(app);
  return {
    subscribe(onChange) {
      const instance = auth();
      const users = usersOf(instance);
      users.listeners.add(onChange);
      users.stop ??= onAuthStateChanged(instance, () => {
        users.known = true;
        for (const listener of [...users.listeners]) listener();
      });
      return () => {
        users.listeners.delete(onChange);
        if (users.listeners.size > 0) return;
        users.stop?.();
        users.stop = undefined;
      };
    },
    getSnapshot: () => {
      const instance = auth();
      return uidOf(instance, usersOf(instance));
    },
    getServerSnapshot: () => undefined,
    ready: () => {
      const instance = auth();
      const users = usersOf(instance);
      if (users.known) return Promise.resolve(uidOf(instance, users) ?? null);
      return new Promise((resolve) => {
        const stop = onAuthStateChanged(instance, (user) => {
          users.known = true;
          stop();
          resolve(user?.uid ?? null);
        });
      });
    },
  };
}
