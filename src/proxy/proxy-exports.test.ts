import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as proxy from './index.ts';

test('agent-governor/proxy names the session header, and exports no function whose argument types a user cannot name', () => {
  // proxySessionId took the proxy's internal wire format (WireApi), which no user could name or build; the README
  // documents how the proxy names sessions (the x-governor-session header first), not that function.
  assert.equal('proxySessionId' in proxy, false);
  assert.equal(proxy.SESSION_HEADER, 'x-governor-session');
});
