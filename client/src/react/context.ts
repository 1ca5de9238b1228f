// The client the hooks use: `options.client`, else the one a <CounterClientProvider client={...}> above
// supplies. No provider is needed when a hook is passed its client.
import { createContext, createElement, useContext, type ReactElement, type ReactNode } from "react";
import type { CounterClient } from "../client.js";

const ClientContext = createContext<CounterClient | undefined>(undefined);

export interface CounterClientProviderProps {
  /** What createCounterClient returned: one per app, made once (not in a component's render). */
  client: CounterClient;
  children?: ReactNode;
}

/** Supplies `client` to every useCounter and useLike below it that is not passed one. */
export function CounterClientProvider({ client, children }: CounterClientProviderProps): ReactElement {
  return createElement(ClientContext.Provider, { value: client }, children);
}

/** The hook's client: the one passed, else the provider's; a hook with neither is a programming error. */
export function useClient(hook: string, passed: CounterClient | undefined): CounterClient {
  const provided = useContext(ClientContext);
  const client = passed ?? provided;
  if (client === undefined) throw new Error(`${hook}: no counter client: pass { client } or render it inside <CounterClientProvider client={...}>`);
  return client;
}
