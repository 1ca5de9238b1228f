// The signed-in user's uid (null signed out), kept current through sign-in and sign-out.
import { onAuthStateChanged, type Auth } from "firebase/auth";
import { useCallback, useSyncExternalStore } from "react";

export function useUid(auth: Auth): string | null {
  const subscribe = useCallback((onChange: () => void) => onAuthStateChanged(auth, onChange), [auth]);
  return useSyncExternalStore(subscribe, () => auth.currentUser?.uid ?? null);
}
