/**
 * The scenario families of the corpus. Every trajectory carries one in its
 * `family` field (and in its id), so coverage can be counted and asserted.
 * Stuck families describe a loop; look-alike families describe productive
 * work that repeats on the surface.
 */

export const STUCK_FAMILIES = {
  'spiral-identical': 'the same call with identical arguments, results bringing nothing new',
  'spiral-varied-args': 'the same call with slightly varied arguments (whitespace, key order, a harmless flag, a rephrased query)',
  'short-cycle': 'a cycle of 2 to 5 calls repeated with nothing new in the results',
  'error-loop': 'the same call failing with the same error again and again (error text may carry a varying request id or time)',
  'token-drift': 'prompt tokens growing by at least 1.35x per model call while the agent pulls ever more content without progress',
  'rag-fixation': 'near-duplicate retrieval queries whose results do not change',
  'delegation-loop': 'a sub-agent (delegation step) re-asked the same thing and answering the same',
  'subagent-tool-loop': 'a sub-agent called as a tool, re-asked the same thing and answering the same',
  'text-repetition': "the model's own text repeating the same paragraph across rounds without progress",
  'non-latin-loop': 'a loop whose arguments are Japanese, Chinese, Korean, Russian or Arabic',
  'loop-across-turns': 'a loop that goes on across user turns that add nothing ("ok", "go on")',
} as const;

export const LOOKALIKE_FAMILIES = {
  pagination: 'the same listing paged through (cursor or page in arguments, or identical next-page calls) with new rows each time',
  'chunked-read': 'one file read in successive chunks (offsets, line ranges, or identical scroll calls)',
  'many-files': 'reading or editing many different files',
  'batch-edit': 'the same edit applied across many files',
  polling: 'a build, job or status polled until it changes, or re-checked after an outside event',
  'bounded-retry': 'a few retries after 503, 429 or a timeout, then success or moving on',
  'edit-test-cycle': 'edit and test repeated, the code changing each time and the failing tests moving',
  'id-sweep': 'the same tool over different ids, dates or urls',
  'delegation-items': 'one sub-agent given different items (chunk 1..n, file a..n)',
  compaction: 'prompt tokens rising then falling after a summary, repeatedly',
  'early-growth': 'fast prompt growth in the first rounds from a small context while reading new material',
  'structured-text': 'model text with tables, lists and code blocks that repeat structure but not content',
  'non-latin-varied': 'Japanese, Chinese, Korean, Russian or Arabic arguments that differ',
  'rag-refined': 'retrieval queries refined, each with different results',
  'rag-reingest': 'the same retrieval query again after an outside event added documents',
  'recheck-after-user': 'the same lookup repeated because the user changed something in between',
  'near-miss': 'a call repeated once (two occurrences), then changed and succeeding',
  'long-coding-run': 'a long productive coding session (60 to 150 steps) with realistic token totals',
  'linear-task': 'an ordinary task without repetition',
} as const;

export type StuckFamily = keyof typeof STUCK_FAMILIES;
export type LookalikeFamily = keyof typeof LOOKALIKE_FAMILIES;
export type Family = StuckFamily | LookalikeFamily;

export function isStuckFamily(family: string): family is StuckFamily {
  return Object.hasOwn(STUCK_FAMILIES, family);
}

export function isLookalikeFamily(family: string): family is LookalikeFamily {
  return Object.hasOwn(LOOKALIKE_FAMILIES, family);
}
