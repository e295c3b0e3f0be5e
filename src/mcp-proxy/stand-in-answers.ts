import { randomUUID } from 'node:crypto';

/** A JSON-RPC error answer, as the MCP SDK's client reads it. */
export interface StandInAnswer {
  readonly jsonrpc: '2.0';
  readonly id: string | number;
  readonly error: { readonly code: number; readonly message: string; readonly data: { readonly governorStandIn: string; readonly reason: string } };
}

/** JSON-RPC's code for an internal error: the server was not at fault, nor the request. */
const INTERNAL_ERROR = -32603;

/**
 * Error answers the proxy reads in place of an MCP server's answer that will
 * never come or cannot be read (a dropped response stream, a message over
 * the size limit): the request waiting for it fails at once, through the MCP
 * SDK's own client, instead of waiting forever. They carry a mark of their
 * own, so that the proxy tells them from the server's own error answers
 * (which reach the client unchanged).
 */
export class StandInAnswers {
  readonly #mark = randomUUID();

  /** An error answer to request `id`, saying in `reason` why the server's own is missing. */
  answer(id: string | number, reason: string): StandInAnswer {
    return { jsonrpc: '2.0', id, error: { code: INTERNAL_ERROR, message: reason, data: { governorStandIn: this.#mark, reason } } };
  }

  /** The reason of a stand-in answer, as the SDK's client rejects the request with it; undefined for any other error. */
  reasonOf(error: unknown): string | undefined {
    const data = (error as { data?: { governorStandIn?: unknown; reason?: unknown } } | null)?.data;
    return data?.governorStandIn === this.#mark && typeof data.reason === 'string' ? data.reason : undefined;
  }
}
