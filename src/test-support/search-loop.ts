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
