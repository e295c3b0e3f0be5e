import { OUTPUT_LABEL } from './output-label.ts';

/**
 * How search backends and tools say that a request found nothing: "Could not
 * find [X]. Similar: […]", "No results", "Nothing matched", "0 hits", "Page
 * not found", "No good Wikipedia Search Result was found". Only the opening is
 * read: that is where such messages say so, and a document that merely
 * mentions "not found" further down is a hit. The opening may carry a tool's
 * label ("Observation: ", "Result: ", a header line "[search output]"), an apology ("Sorry, I couldn't find"), or say what was
 * searched first ("Search for [X] returned no results", "There is no page
 * titled [X]", "Found 0 results for [X]").
 */
const NOT_FOUND = new RegExp(
  `^\\W{0,4}${OUTPUT_LABEL}(?:(?:sorry|unfortunately|apologies)\\W{1,3})?(?:(?:i|we)(?:'m| am| was| were)? )?(?:(?:(?:the |your )?search(?:ing)?|query|lookup)(?: for)? [^\\n]{1,100}? (?:returned|gave|yielded|produced|found) |there (?:is|are|was|were) |found )?(?:${[
    /(?:could ?not|couldn't|cannot|can't|unable to|did not|didn't|failed to) (?:find|locate|retrieve|match)\b/,
    /no (?:\w+ ){0,3}(?:results?|match(?:es)?|hits?|documents?|pages?|entries|entry|articles?|records?|passages?)\b(?! (?:for|about|on|of) \w+ (?:is|are|was|were)\b)/,
    /nothing (?:was |has been )?(?:found|matched|retrieved)\b/,
    /(?:0|zero) (?:results?|match(?:es)?|hits?|documents?)\b/,
    /(?:\w+ ){0,2}not found\b/,
  ]
    .map((p) => p.source)
    .join('|')})`,
  'i',
);

/**
 * Whether a search result (a retrieved passage or a search tool's answer)
 * reports that nothing was found. Such answers are the same outcome however
 * they are worded: they echo the query and list other suggestions each time,
 * yet bring nothing.
 */
export function isFailedSearch(result: string | null | undefined): boolean {
  return result !== null && result !== undefined && NOT_FOUND.test(result.slice(0, 160));
}
