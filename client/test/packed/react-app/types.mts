// Type-checked (never run) by the React packed test: the hooks' types as an ESM TypeScript app sees them,
// with the @types/react of the app's React major.
import { initializeApp } from "firebase/app";
import { getFirestore } from "firebase/firestore";
import { getFunctions } from "firebase/functions";
import { createCounterClient, SignInRequiredError, type IncrementOutcome, type SetMemberOutcome } from "@firestore-exact-counter/client";
import { CounterClientProvider, useCounter, useLike, type HookStatus, type UseCounterResult, type UseLikeResult } from "@firestore-exact-counter/client/react";
import { createElement, type ReactElement } from "react";

const app = initializeApp({ projectId: "demo-types" });
const client = createCounterClient({ functions: getFunctions(app), firestore: getFirestore(app) });

export function Views(): ReactElement {
  const views: UseCounterResult = useCounter("post-1-views", { window: "today", autoCreated: true, client });
  const status: HookStatus = views.status;
  const value: number | undefined = views.status === "success" ? views.data.value : undefined;
  const error: Error | undefined = views.status === "error" ? views.error : undefined;
  const tap: Promise<IncrementOutcome> = views.increment(2);
  void tap;
  // @ts-expect-error: no such window
  useCounter("post-1-views", { window: "yesterday" });
  return createElement("p", null, status, value, error?.message);
}

export function Likes(): ReactElement {
  const likes: UseLikeResult = useLike("post-1-likes");
  if (likes.status === "success") {
    const liked: boolean = likes.data.liked;
    const count: number = likes.data.count;
    void [liked, count];
  }
  const taps: Promise<SetMemberOutcome>[] = [likes.like(), likes.unlike(), likes.toggle()];
  void taps.map((tap) => tap.catch((error: unknown) => error instanceof SignInRequiredError && error.code === "unauthenticated"));
  return createElement(CounterClientProvider, { client }, createElement(Views));
}
