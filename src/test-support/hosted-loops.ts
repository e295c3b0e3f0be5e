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

/** What the stand-in answers after each page it opened. */
export const PAGE_LOOP_ANSWER = 'Let me read that page once more.';

/**
 * A stand-in model whose provider opens the same page in every answer (an
 * OpenAI web search's `open_page`, Anthropic's `web_fetch`), as a model
 * rereading one page does: the third is a tool spiral.
 */
export function pageLoopServer(): Promise<ScriptedModelServer> {
  return new ScriptedModelServer({
    script: () => ({ webSearches: [{ openPage: 'https://fares.example/oslo', pageText: 'Oslo in March: from 49 EUR.' }], text: PAGE_LOOP_ANSWER }),
  }).start();
}

/** What the stand-in answers after each run of its code. */
export const CODE_LOOP_ANSWER = 'Let me run that once more.';

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
 * A stand-in model whose provider runs the same failing code in every answer
 * (an OpenAI `code_interpreter_call`, an Anthropic `bash_code_execution`), as
 * a model retrying code without fixing it does: the third failure is an error loop.
 */
export function codeLoopServer(): Promise<ScriptedModelServer> {
  return new ScriptedModelServer({
    script: (_request, index) => ({
      codeRuns: [{ code: "import pandas as pd\nsales = pd.read_csv('sales.csv')\nsales['revenue'].sum()", output: keyErrorTraceback(index + 1), exitCode: 1 }],
      text: CODE_LOOP_ANSWER,
    }),
  }).start();
}

/** What the stand-in answers after each call of the remote MCP tool. */
export const MCP_LOOP_ANSWER = 'Let me look at that ticket once more.';

/**
 * A stand-in model whose provider calls the same remote MCP tool with the
 * same arguments in every answer, for the same output (an OpenAI `mcp_call`,
 * an Anthropic `mcp_tool_use`), as a model rereading one ticket does: the
 * third is a tool spiral.
 */
export function mcpLoopServer(): Promise<ScriptedModelServer> {
  return new ScriptedModelServer({
    script: () => ({
      mcpCalls: [{ server: 'tracker', name: 'get_issue', arguments: { id: 'ENG-42' }, output: 'ENG-42: Login fails on Safari. Status: In Progress.' }],
      text: MCP_LOOP_ANSWER,
    }),
  }).start();
}
