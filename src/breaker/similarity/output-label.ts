/**
 * What a tool or an agent framework may put before a tool's own output: a
 * header line (`[search output]`) and a label (`Observation: `, `Result: `).
 * Tests that read how an output opens ("Could not find", "Error:") skip it,
 * so that a framing does not hide what the output says.
 */
export const OUTPUT_LABEL = String.raw`(?:\[[^\]\n]{1,40}\][ \t]*\n\W{0,4})?(?:(?:observation|(?:search )?results?|output|response|answer|error|warning|info)\s*:\s*)?`;
