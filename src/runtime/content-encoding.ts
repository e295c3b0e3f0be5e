import { promisify } from 'node:util';
import zlib from 'node:zlib';

/** A body decoded as its `Content-Encoding` says, or why it cannot be (with the HTTP status that says so). */
export type DecodedContent =
  | { readonly ok: true; readonly bytes: Uint8Array }
  | { readonly ok: false; readonly status: 400 | 413 | 415; readonly message: string };

type Decoder = (input: Uint8Array, options: zlib.ZlibOptions & zlib.BrotliOptions) => Promise<Buffer>;

/** zstd only from Node 22.15 and 23.8: on an older Node such a body cannot be read. */
const zstd = (zlib as { zstdDecompress?: typeof zlib.gunzip }).zstdDecompress;

const DECODERS: Readonly<Record<string, Decoder>> = {
  gzip: promisify(zlib.gunzip),
  'x-gzip': promisify(zlib.gunzip),
  deflate: promisify(zlib.inflate),
  br: promisify(zlib.brotliDecompress),
  ...(zstd === undefined ? {} : { zstd: promisify(zstd) as Decoder }),
};

/**
 * A request body decoded as its `Content-Encoding` says (codings undone last
 * first), at most `maxBytes` once decoded when given. Agents compress what
 * they send (Codex sends zstd).
 */
export async function decodeContent(raw: Uint8Array, contentEncoding: string | null | undefined, maxBytes?: number): Promise<DecodedContent> {
  let bytes = raw;
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  for (const coding of codings.reverse()) {
    const decode = DECODERS[coding];
    if (decode === undefined) {
      return {
        ok: false,
        status: 415,
        message: `the request body's Content-Encoding "${coding}" is not one that can be decoded here (${Object.keys(DECODERS).join(', ')})`,
      };
    }
    try {
      bytes = new Uint8Array(await decode(bytes, maxBytes === undefined ? {} : { maxOutputLength: maxBytes }));
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
        return { ok: false, status: 413, message: `the request body, decoded, is larger than ${maxBytes} bytes` };
      }
      return { ok: false, status: 400, message: `the request body is not valid ${coding} data, as its Content-Encoding says it is` };
    }
  }
  return { ok: true, bytes };
}
