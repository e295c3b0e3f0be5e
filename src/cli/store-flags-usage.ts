// Apart from breaker-flags.ts: the commands' help is loaded for every command, the breaker only for the one that runs.

/** The usage lines of the store flags, shared by the commands' help. */
export const STORE_FLAGS_USAGE = `  --store-prefix P key prefix in the store (default governor:breaker:; needs --store)
  --store-timeout MS
                   longest wait for one store round trip, in ms; past it the breaker
                   fails open, or closed as configured (default 2000; needs --store)`;
