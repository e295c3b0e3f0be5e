export { hash32, hash53 } from './hash.ts';
export { normalizeText, tokenHashes, tokenize } from './tokenize.ts';
export {
  DEFAULT_SKETCH_SIZE,
  containment,
  jaccard,
  packSketch,
  SKETCH_HASH_BITS,
  sketchHashes,
  sketchJaccard,
  sketchText,
  sketchTokens,
  textSimilarity,
  unpackSketch,
  type AnySketch,
  type PackedSketch,
  type TokenSketch,
} from './token-sketch.ts';
export { DEFAULT_IDENTITY_KEYS, IdentityKeyMatcher, RETRY_KEYS, foldKey, type KeyKind } from './identity-keys.ts';
export {
  ArgsFingerprinter,
  canonicalJson,
  compareFingerprints,
  fieldPrints,
  type ArgsFingerprint,
  type FieldKind,
  type FieldPrint,
  type FingerprintLimits,
  type PackedFields,
} from './args-fingerprint.ts';
export { isTransientError, looksLikeError, normalizeResult, resultHash } from './result-hash.ts';
export { passageSetHash } from './passage-set.ts';
export { splitSentences, stripStructuredMarkdown } from './prose.ts';
