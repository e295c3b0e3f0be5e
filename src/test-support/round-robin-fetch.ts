/**
 * A `fetch` that sends each request to the next of `servers` in turn, as a
 * round-robin load balancer in front of replicas would: only the host of the
 * URL asked for changes.
 */
export function roundRobinFetch(servers: readonly { readonly url: string }[]): typeof fetch {
  let next = 0;
  return (input, init) => {
    const target = new URL(input instanceof Request ? input.url : String(input));
    target.host = new URL(servers[next++ % servers.length]!.url).host;
    return fetch(target, init);
  };
}
