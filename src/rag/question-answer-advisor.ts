import type { ModelMessage, UserContent, UserModelMessage } from 'ai';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { AdvisorOrder, type Advisor, type AdvisorChain } from '../chat/advisor.ts';
import { CALL_SESSION_ID, sessionIdOf, type AdvisorContext } from '../chat/advisor-context.ts';
import type { ChatClientRequest } from '../chat/chat-client-request.ts';
import type { ChatClientResponse, ChatStreamEvent } from '../chat/chat-response.ts';
import { CONTINUATION_TURN, reportObservation } from '../chat/observation.ts';
import type { Document } from './document.ts';
import { parseMetadataFilter, type MetadataFilter } from './metadata-filter.ts';
import { DEFAULT_TOP_K, SIMILARITY_THRESHOLD_ACCEPT_ALL, type VectorStore } from './vector-store.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** Context key under which the advisor leaves the documents it retrieved (`Document[]`). */
export const RETRIEVED_DOCUMENTS = 'qa_retrieved_documents';

/**
 * Advisor param that replaces the configured metadata filter for one request:
 * `.advisors(a => a.param(FILTER_EXPRESSION, { tenant: 'acme' }))`. `null`
 * searches without any filter.
 */
export const FILTER_EXPRESSION = 'qa_filter_expression';

/**
 * Prompt used unless `promptTemplate` says otherwise. `{query}` is the user's
 * text, `{question_answer_context}` the retrieved documents.
 */
export const DEFAULT_QUESTION_ANSWER_TEMPLATE = `{query}

Reference material for this question is between the two lines below.
----------
{question_answer_context}
----------
Answer from this material and the conversation so far, not from what you knew before.
If the material does not hold the answer, say that you cannot answer it from the material.`;

/** How the advisor searches. */
export interface QuestionAnswerSearchOptions {
  /**
   * Most documents to add to the prompt.
   * @default 4
   */
  readonly topK?: number;
  /**
   * Lowest cosine similarity a document needs, from 0 to 1.
   * @default 0 (every document)
   */
  readonly similarityThreshold?: number;
  /**
   * Only documents whose metadata match; a request can replace it with the
   * {@link FILTER_EXPRESSION} advisor param.
   * @default no filter
   */
  readonly filter?: MetadataFilter;
}

/** Options of {@link QuestionAnswerAdvisor}. */
export interface QuestionAnswerAdvisorOptions {
  /** Where to look for documents. */
  readonly vectorStore: VectorStore;
  /**
   * How to search.
   * @default { topK: 4, similarityThreshold: 0 }
   */
  readonly searchRequest?: QuestionAnswerSearchOptions;
  /**
   * Replaces the text of the user's message. Placeholders: `{query}` (the
   * user's text, which is also the search query) and
   * `{question_answer_context}` (the retrieved documents' texts, separated by
   * blank lines). Both must appear. In a message of several parts (text
   * with images or files) the parts stay as they are, in place of `{query}`,
   * and the template's text before and after it becomes text parts of its own.
   * @default DEFAULT_QUESTION_ANSWER_TEMPLATE
   */
  readonly promptTemplate?: string;
  /**
   * Position in the chain. The default puts it outside the ToolCallAdvisor,
   * so the prompt is augmented once and kept for every round of the loop.
   * @default AdvisorOrder.RETRIEVAL
   */
  readonly order?: number;
}

interface Retrieval {
  readonly query: string;
  readonly documents: Document[];
}

/** What each option of QuestionAnswerAdvisor accepts. */
const QUESTION_ANSWER_ADVISOR_OPTION_RULES: OptionRules<QuestionAnswerAdvisorOptions> = {
  vectorStore: is.having('a VectorStore (with similaritySearch)', 'similaritySearch'),
  searchRequest: (value, path) =>
    validateOptions(
      'searchRequest',
      value as QuestionAnswerSearchOptions,
      { topK: is.integer(1), similarityThreshold: is.number(0, 1), filter: is.any() },
      { prefix: path },
    ),
  promptTemplate: is.string(),
  order: is.number(-Number.MAX_VALUE),
};

/**
 * Retrieval-augmented generation: finds the documents most similar to the
 * user's message in a {@link VectorStore} and puts them into that message via
 * a template, so the model answers from them.
 *
 * It searches once per call — not once per tool-loop round, even when placed
 * inside the loop — and leaves the documents in the response context under
 * {@link RETRIEVED_DOCUMENTS}. Every search is reported to the chain's
 * observation sinks as a `retrieval` event (query and result ids), which is
 * how the AgentBreaker notices RAG query fixation without any wiring.
 */
export class QuestionAnswerAdvisor implements Advisor {
  readonly name = 'QuestionAnswerAdvisor';
  readonly order: number;
  readonly #vectorStore: VectorStore;
  readonly #topK: number;
  readonly #similarityThreshold: number;
  readonly #filter: MetadataFilter | undefined;
  readonly #template: string;
  /** One retrieval per call: a call's context is one Map from its first advisor to its last round. */
  readonly #retrievals = new WeakMap<AdvisorContext, Retrieval>();
  /** The last question of each named conversation, for its continuation turns; least recently asked first. */
  readonly #questions = new Map<string, Retrieval>();

  constructor(options: QuestionAnswerAdvisorOptions) {
    validateOptions('QuestionAnswerAdvisor', options, QUESTION_ANSWER_ADVISOR_OPTION_RULES, { required: ['vectorStore'] });
    const store = options?.vectorStore as Partial<VectorStore> | undefined;
    if (typeof store?.similaritySearch !== 'function') {
      throw new InvalidOptionError('vectorStore', 'expected a VectorStore (an object with similaritySearch)');
    }
    const search = options.searchRequest ?? {};
    const topK = search.topK ?? DEFAULT_TOP_K;
    const threshold = search.similarityThreshold ?? SIMILARITY_THRESHOLD_ACCEPT_ALL;
    if (search.filter !== undefined) parseMetadataFilter(search.filter, 'searchRequest.filter');
    const template = options.promptTemplate ?? DEFAULT_QUESTION_ANSWER_TEMPLATE;
    for (const placeholder of ['{query}', '{question_answer_context}']) {
      if (typeof template !== 'string' || !template.includes(placeholder)) {
        throw new InvalidOptionError('promptTemplate', `must contain the placeholder ${placeholder}`);
      }
    }
    this.#vectorStore = options.vectorStore;
    this.#topK = topK;
    this.#similarityThreshold = threshold;
    this.#filter = search.filter;
    this.#template = template;
    this.order = options.order ?? AdvisorOrder.RETRIEVAL;
  }

  async adviseCall(request: ChatClientRequest, chain: AdvisorChain): Promise<ChatClientResponse> {
    const advised = await this.#augment(request);
    const response = await chain.nextCall(advised);
    this.#publish(request.context, response.context);
    return response;
  }

  async *adviseStream(request: ChatClientRequest, chain: AdvisorChain): AsyncIterable<ChatStreamEvent> {
    const advised = await this.#augment(request);
    for await (const event of chain.nextStream(advised)) {
      if (event.type === 'finish') this.#publish(request.context, event.response.context);
      yield event;
    }
  }

  async #augment(request: ChatClientRequest): Promise<ChatClientRequest> {
    const conversation = conversationOf(request.context);
    if (conversation !== undefined && request.context.get(CONTINUATION_TURN) === true) {
      const continued = await this.#continued(request, conversation);
      if (continued !== undefined) return continued;
    }
    const index = request.messages.findLastIndex((message) => message.role === 'user');
    const message = request.messages[index];
    const query = message?.role === 'user' ? textOf(message.content) : '';
    if (message?.role !== 'user' || query.trim().length === 0) {
      request.context.set(RETRIEVED_DOCUMENTS, []);
      return request;
    }
    const retrieval = await this.#retrieve(request, query);
    if (conversation !== undefined && request.context.get(CONTINUATION_TURN) !== true) this.#remember(conversation, retrieval);
    return this.#augmented(request, index, retrieval);
  }

  /**
   * A continuation turn's request: its last user message is the caller's own
   * (a harness's reminder, a retry), not a question. The question it goes on
   * with is the conversation's last one, when the request still holds it:
   * that message gets that question's documents again, without a search.
   */
  async #continued(request: ChatClientRequest, conversation: string): Promise<ChatClientRequest | undefined> {
    const asked = this.#questions.get(conversation);
    if (asked === undefined) return undefined;
    const index = request.messages.findLastIndex((message) => message.role === 'user' && textOf(message.content) === asked.query);
    if (index === -1) return undefined;
    if (this.#retrievals.get(request.context) !== asked) {
      this.#retrievals.set(request.context, asked);
      // The question asked again (a retry) is the same search again, as the breaker is told: a reminder after it is not.
      const retried = index === request.messages.findLastIndex((message) => message.role === 'user');
      if (retried) await this.#report(request.context, asked);
    }
    return this.#augmented(request, index, asked);
  }

  #remember(conversation: string, retrieval: Retrieval): void {
    this.#questions.delete(conversation);
    this.#questions.set(conversation, retrieval);
    if (this.#questions.size > REMEMBERED_CONVERSATIONS) this.#questions.delete(this.#questions.keys().next().value!);
  }

  /** The request with its message at `index` filled into the template with the retrieval's documents. */
  #augmented(request: ChatClientRequest, index: number, { query, documents }: Retrieval): ChatClientRequest {
    const message = request.messages[index] as UserModelMessage;
    request.context.set(RETRIEVED_DOCUMENTS, documents);
    const context = documents.map((document) => withoutDelimiterLines(document.text)).join('\n\n');
    const messages: ModelMessage[] = [...request.messages];
    messages[index] = { ...message, content: augment(message.content, this.#template, query, context) };
    return { ...request, messages };
  }

  async #retrieve(request: ChatClientRequest, query: string): Promise<Retrieval> {
    const earlier = this.#retrievals.get(request.context);
    if (earlier !== undefined && earlier.query === query) return earlier;
    const documents = await this.#vectorStore.similaritySearch({
      query,
      topK: this.#topK,
      similarityThreshold: this.#similarityThreshold,
      ...withFilter(this.#filterFor(request.context)),
      ...(request.abortSignal !== undefined && { signal: request.abortSignal }),
    });
    const retrieval = { query, documents };
    this.#retrievals.set(request.context, retrieval);
    await this.#report(request.context, retrieval);
    return retrieval;
  }

  /** Tells the chain's observation sinks (the breaker) of a search: its query and the ids it found. */
  #report(context: AdvisorContext, { query, documents }: Retrieval): Promise<void> {
    return reportObservation(context, sessionIdOf(context), { kind: 'retrieval', query, results: documents.map((document) => document.id) });
  }

  #filterFor(context: AdvisorContext): MetadataFilter | undefined {
    const override = context.get(FILTER_EXPRESSION);
    if (override === undefined) return this.#filter;
    if (override === null) return undefined;
    parseMetadataFilter(override, FILTER_EXPRESSION);
    return override as MetadataFilter;
  }

  /** The request's context normally is the response's; a downstream advisor may have replaced it. */
  #publish(requestContext: AdvisorContext, responseContext: AdvisorContext): void {
    if (responseContext !== requestContext && requestContext.has(RETRIEVED_DOCUMENTS)) {
      responseContext.set(RETRIEVED_DOCUMENTS, requestContext.get(RETRIEVED_DOCUMENTS));
    }
  }
}

/** Most conversations whose last question the advisor keeps for their continuation turns. */
const REMEMBERED_CONVERSATIONS = 256;

/** The conversation a request names; none for a call without an id, which has no continuation turns of its own. */
function conversationOf(context: AdvisorContext): string | undefined {
  return context.has(CALL_SESSION_ID) ? undefined : sessionIdOf(context);
}

/**
 * A document's text with each line of ten or more dashes (the default
 * template's delimiter) moved in by a space: a document holding one could
 * otherwise close the reference material early and write what follows as
 * the user's own words.
 */
function withoutDelimiterLines(text: string): string {
  return text.replace(/^(-{10,})[ \t]*$/gm, ' $1');
}

function withFilter(filter: MetadataFilter | undefined): { filter?: MetadataFilter } {
  return filter === undefined ? {} : { filter };
}

/** The text parts of a user message, joined; images and files carry no query text. */
function textOf(content: UserContent): string {
  if (typeof content === 'string') return content;
  return content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

/**
 * The user content put into the template. Text content is the template
 * filled in. A message of parts keeps every part, in place, where the
 * template's first `{query}` stands, and gets the template's text before and
 * after it as parts of their own: a text part labelling an image stays next
 * to that image.
 */
function augment(content: UserContent, template: string, query: string, context: string): UserModelMessage['content'] {
  // One pass, so placeholders inside the query or the documents stay as written.
  const fill = (text: string): string =>
    text.replace(/\{(query|question_answer_context)\}/g, (placeholder: string) => (placeholder === '{query}' ? query : context));
  if (typeof content === 'string') return fill(template);
  const at = template.indexOf('{query}');
  const before = fill(template.slice(0, at));
  const after = fill(template.slice(at + '{query}'.length));
  return [
    ...(before.length > 0 ? [{ type: 'text' as const, text: before }] : []),
    ...content,
    ...(after.length > 0 ? [{ type: 'text' as const, text: after }] : []),
  ];
}
