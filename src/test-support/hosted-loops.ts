import { ScriptedModelServer } from '../testing/index.ts';

/** What the stand-in answers after each search. */
export const SEARCH_LOOP_ANSWER = 'Let me look once more.';

/**
 * A stand-in model whose provider runs the same web search in every answer
 * (reworded, the same pages found), as a model fixated on one search does:
 * the third is a RAG fixation. With `perAnswer`, each answer runs that many
 * of them (a research model searching several times in one response).
 */
export function searchLoopServer(options: { perAnswer?: number } = {}): Promise<ScriptedModelServer> {
  const sources = ['https://fares.example/oslo', 'https://air.example/osl'];
  const queries = ['cheapest flight to Oslo in March', 'cheapest flights Oslo March', 'cheapest Oslo flight in March', 'Oslo cheapest flights March'];
  const perAnswer = options.perAnswer ?? 1;
  return new ScriptedModelServer({
    script: (_request, index) => ({
      webSearches: Array.from({ length: perAnswer }, (_, i) => ({ query: queries[(index * perAnswer + i) % queries.length]!, sources })),
      text: SEARCH_LOOP_ANSWER,
    }),
  }).start();
}

/**
 * A stand-in model whose provider runs the same call in every answer, as a
 * model going round in circles does, and how the breaker meets it: the 3rd
 * call is steered, the 4th noted again (it has run, so nothing is refused),
 * the 5th stopped.
 */
export interface HostedLoop {
  /** Starts the stand-in. */
  readonly start: () => Promise<ScriptedModelServer>;
  /** What the stand-in answers after each call. */
  readonly answer: string;
  /** What the breaker stops it as. */
  readonly category: 'tool_spiral' | 'error_loop';
  /** The counts the breaker's notes give after the 3rd and the 4th call. */
  readonly counts: readonly [string, string];
}

/**
 * The breaker's note on `tool` in a request serialised as JSON, after the
 * door's `tag` (`AgentBreaker`, `governor`), its count captured: "called
 * "tool" N times" for a spiral, ""tool" has failed N times" for an error loop.
 */
export function loopNote(loop: HostedLoop, tag: string, tool: string): RegExp {
  return new RegExp(`\\[${tag}\\][^"]*?"${tool}\\\\?" ${loop.category === 'error_loop' ? 'has failed ' : ''}(\\d) times`, 'g');
}

/** The same page opened in every answer (an OpenAI web search's `open_page`, Anthropic's `web_fetch`), as a model rereading one page does. */
export const PAGE_LOOP: HostedLoop = {
  start: () =>
    new ScriptedModelServer({
      script: () => ({ webSearches: [{ openPage: 'https://fares.example/oslo', pageText: 'Oslo in March: from 49 EUR.' }], text: PAGE_LOOP.answer }),
    }).start(),
  answer: 'Let me read that page once more.',
  category: 'tool_spiral',
  counts: ['3', '4'],
};

/** The traceback of the stand-in's failing run, under IPython's cell counter (one more each run). */
function keyErrorTraceback(cell: number): string {
  return [
    'KeyError                                  Traceback (most recent call last)',
    `Cell In[${cell}], line 3`,
    '      1 import pandas as pd',
    "      2 sales = pd.read_csv('sales.csv')",
    "----> 3 sales['revenue'].sum()",
    '',
    "KeyError: 'revenue'",
  ].join('\n');
}

/**
 * The same failing code run in every answer (an OpenAI `code_interpreter_call`,
 * an Anthropic `bash_code_execution`), as a model retrying code without fixing it does.
 */
export const CODE_LOOP: HostedLoop = {
  start: () =>
    new ScriptedModelServer({
      script: (_request, index) => ({
        codeRuns: [
          { code: "import pandas as pd\nsales = pd.read_csv('sales.csv')\nsales['revenue'].sum()", output: keyErrorTraceback(index + 1), exitCode: 1 },
        ],
        text: CODE_LOOP.answer,
      }),
    }).start(),
  answer: 'Let me run that once more.',
  category: 'error_loop',
  counts: ['2', '3'],
};

/**
 * The same remote MCP tool called with the same arguments in every answer,
 * for the same output (an OpenAI `mcp_call`, an Anthropic `mcp_tool_use`), as
 * a model rereading one ticket does.
 */
export const MCP_LOOP: HostedLoop = {
  start: () =>
    new ScriptedModelServer({
      script: () => ({
        mcpCalls: [{ server: 'tracker', name: 'get_issue', arguments: { id: 'ENG-42' }, output: 'ENG-42: Login fails on Safari. Status: In Progress.' }],
        text: MCP_LOOP.answer,
      }),
    }).start(),
  answer: 'Let me look at that ticket once more.',
  category: 'tool_spiral',
  counts: ['3', '4'],
};

/** What the stand-in's hosted shell prints for the failing test run. */
export const CART_FAILURE = 'FAIL src/cart.test.ts: expected 3, got 2';

/** The same failing test run in the API's container in every answer (a hosted shell), as a model rerunning tests without fixing anything does. */
export const SHELL_LOOP: HostedLoop = {
  start: () =>
    new ScriptedModelServer({
      script: () => ({ shellRuns: [{ commands: ['npm test'], results: [{ stderr: CART_FAILURE, exitCode: 1 }] }], text: SHELL_LOOP.answer }),
    }).start(),
  answer: 'Let me run the tests once more.',
  category: 'error_loop',
  counts: ['2', '3'],
};
