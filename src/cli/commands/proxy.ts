import type { CliCommand } from '../cli-command.ts';
import { STORE_FLAGS_USAGE } from '../store-flags-usage.ts';

export const PROXY_USAGE = `Usage: governor proxy --upstream URL [--port 8787] [--host 127.0.0.1] [--config FILE] [--store redis://…] [--metrics]
                     [--max-request-bytes N] [--upstream-timeout SECONDS]

A model proxy speaking the OpenAI Chat Completions API (/v1/chat/completions),
the OpenAI Responses API (/v1/responses) and the Anthropic Messages API
(/v1/messages). Point an agent's base URL at
http://HOST:PORT/v1; every request goes on to URL unchanged while the agent
breaker watches the run.

  --upstream URL   model API base URL, e.g. https://api.openai.com/v1 (required)
  --port N         port to listen on; 0 picks a free one (default 8787)
  --host HOST      interface to listen on (default 127.0.0.1)
  --config FILE    JSON file with the breaker options (default: built-in defaults)
  --store URL      shared breaker state, redis://… (default: in memory, this process only)
${STORE_FLAGS_USAGE}
  --metrics        serve GET /metrics for Prometheus (needs @opentelemetry/exporter-prometheus
                   and @opentelemetry/sdk-metrics)
  --max-request-bytes N
                   largest chat request body read, in bytes; a larger one gets 413
                   (default 33554432, 32 MiB); other routes stream bodies unread
  --upstream-timeout SECONDS
                   longest wait for the upstream's answer to begin, and then between
                   its parts; 0 waits as long as the client does (default 0)

Session: the x-governor-session header, else a session-id or session_id header
(Codex's conversation id) or x-session-id (opencode's), else the stored
conversation (conversation) or the session of the response a request continues
(previous_response_id), else the request's user (metadata.user_id,
safety_identifier), else a hash of the system prompt and first user message.`;

/** Loaded on use: the server code (and its HTTP or MCP libraries) only when this command runs. */
export const proxyCommand: CliCommand = {
  name: 'proxy',
  summary: 'model proxy (OpenAI and Anthropic APIs) governed by the breaker, for agents in any language',
  usage: PROXY_USAGE,
  run: async (argv, io) => (await import('../proxy-command.ts')).runProxyCommand(argv, io),
};
