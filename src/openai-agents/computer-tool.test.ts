/**
 * A computer-use agent under the Agents SDK door: the SDK's own runner runs
 * each computer call on the computer `governed.tools` returns, the model
 * being a scripted `Model` (the SDK's own interface: the stand-in model
 * server does not speak computer calls).
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import {
  Agent,
  Usage,
  computerTool,
  type AgentOutputItem,
  type Computer,
  type ComputerTool,
  type ComputerUseCallItem,
  type Model,
  type ModelRequest,
} from '@openai/agents';
import { AgentBreaker, ErrorLoopError, ToolSpiralError, type BreakerEventRecord } from '../index.ts';
import { breakerForOpenAIAgents } from './index.ts';
import { escalations } from '../e2e/recorded-run.ts';

/** A model that takes the same action (a click) `times` times, then says it is done; what it was sent. */
function clickingModel(times: number, action: ComputerUseCallItem['action'] = { type: 'click', x: 412, y: 230, button: 'left' }) {
  const requests: ModelRequest[] = [];
  const done: AgentOutputItem = { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Saved.' }] };
  const model: Model = {
    async getResponse(request) {
      requests.push(request);
      const turn = requests.length;
      const output: AgentOutputItem[] = turn <= times ? [{ type: 'computer_call', callId: `call_${turn}`, status: 'completed', action }] : [done];
      return { usage: new Usage({ requests: 1, inputTokens: 900, outputTokens: 20, totalTokens: 920 }), output, responseId: `resp_${turn}` };
    },
    getStreamedResponse: () => assert.fail('the runs here are not streamed'),
  };
  return { model, requests };
}

/** The screenshot a model turn was sent for the computer call before it. */
function screenshotSent(request: ModelRequest | undefined): string {
  const last = Array.isArray(request?.input) ? request.input.at(-1) : undefined;
  assert.equal(last?.type, 'computer_call_result');
  return (last as { output: { data: string } }).output.data;
}

/** A screen whose clicks are counted; its screenshot changes with each click, or never. */
function screen(changes: boolean): { computer: Computer; clicks: number[][] } {
  const clicks: number[][] = [];
  const idle = async () => {};
  const computer: Computer = {
    environment: 'browser',
    dimensions: [1280, 800],
    screenshot: async () => `iVBORw0KGgo${'A'.repeat(4000)}${changes ? clicks.length : ''}`,
    click: async (x, y) => {
      clicks.push([x, y]);
    },
    doubleClick: idle,
    scroll: idle,
    type: idle,
    wait: idle,
    move: idle,
    keypress: idle,
    drag: idle,
  };
  return { computer, clicks };
}

/**
 * What is printed through `console.error` while a test runs, where the SDK's
 * logger prints a tool's failure ("Failed to execute computer action: …").
 */
function printedErrors(t: TestContext): unknown[][] {
  const printed: unknown[][] = [];
  t.mock.method(console, 'error', (...args: unknown[]) => void printed.push(args));
  return printed;
}

function governed(sessionId = 'oa-computer') {
  const breaker = new AgentBreaker({ telemetry: false });
  const events: BreakerEventRecord[] = [];
  breaker.on((event) => events.push(event));
  return { breaker, events, door: breakerForOpenAIAgents(breaker, { sessionId, runConfig: { tracingDisabled: true } }) };
}

describe('breakerForOpenAIAgents: a computer tool', () => {
  const configs: Array<[string, (computer: Computer, disposed: Computer[]) => ComputerTool['computer']]> = [
    ['a Computer', (computer) => computer],
    ['an initializer function', (computer) => async () => computer],
    [
      'a { create, dispose } initializer',
      (computer, disposed) => ({ create: async () => computer, dispose: async ({ computer: made }: { computer: Computer }) => void disposed.push(made) }),
    ],
  ];
  for (const [given, config] of configs) {
    test(`clicking the same point on a screen that never changes is steered, then refused, then stopped with ToolSpiralError (given ${given})`, async (t) => {
      const printed = printedErrors(t);
      const { events, door } = governed();
      const { computer, clicks } = screen(false);
      const disposed: Computer[] = [];
      const { model, requests } = clickingModel(8);
      const agent = new Agent({ name: 'operator', model: door.model(model), tools: door.tools([computerTool({ computer: config(computer, disposed) })]) });

      const error = await door.run(agent, 'Save the form.', { maxTurns: 20 }).then(
        () => assert.fail('the breaker must end the run'),
        (e: unknown) => e,
      );

      assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
      assert.deepEqual(escalations(events), ['tool_spiral:steer', 'tool_spiral:block', 'tool_spiral:stop']);
      assert.deepEqual(
        clicks,
        [
          [412, 230],
          [412, 230],
          [412, 230],
        ],
        'the refused and the stopped click never reached the computer',
      );
      assert.equal(requests.length, 5, 'no model turn after the stop');
      assert.doesNotMatch(requests[2]?.systemInstructions ?? '', /AgentBreaker/);
      // A screenshot has no room for a note: the steer, then the refusal, go with the model's next turn.
      assert.match(requests[3]?.systemInstructions ?? '', /\[AgentBreaker\] .*"computer_use_preview" 3 times/s);
      assert.match(requests[4]?.systemInstructions ?? '', /\[AgentBreaker\] .*NOT executed/s);
      assert.match(screenshotSent(requests[3]), /^data:image\/png;base64,iVBORw0KGgo/, 'a click that ran is answered with the screenshot after it');
      assert.equal(screenshotSent(requests[4]), '', 'a refused click fails its call, as a failing action does');
      assert.deepEqual(disposed, given.startsWith('a {') ? [computer] : [], 'dispose is handed the computer create made');
      assert.deepEqual(printed, [], 'a refused click is not logged by the SDK as a failed action');
    });
  }

  test('the same click on a screen that changes each time is progress: the run ends untouched, each click recorded with its screenshot', async () => {
    const { breaker, events, door } = governed();
    const { computer, clicks } = screen(true);
    const { model, requests } = clickingModel(8);
    const tools = door.tools([computerTool({ computer })]);
    assert.equal(door.tools(tools)[0], tools[0], 'a tool governed twice is judged once');
    const agent = new Agent({ name: 'operator', model: door.model(model), tools });

    const result = await door.run(agent, 'Save the form.', { maxTurns: 20 });

    assert.equal(result.finalOutput, 'Saved.');
    assert.equal(clicks.length, 8);
    assert.deepEqual(escalations(events), []);
    for (const request of requests) assert.doesNotMatch(request.systemInstructions ?? '', /AgentBreaker/);
    const state = await breaker.snapshot('oa-computer');
    assert.equal(state.counters.toolCalls, 8);
    assert.doesNotMatch(JSON.stringify(state), /iVBOR/, "the screenshots themselves never enter the breaker's state");
  });

  test('a call that only asks for a screenshot is judged too: looking again and again at a screen that does not change is stopped', async (t) => {
    const printed = printedErrors(t);
    const { events, door } = governed();
    const { computer } = screen(false);
    let looked = 0;
    const screenshot = computer.screenshot;
    const { model } = clickingModel(8, { type: 'screenshot' });
    const counted: Computer = {
      ...computer,
      screenshot: (context) => {
        looked++;
        return screenshot(context);
      },
    };
    const agent = new Agent({ name: 'operator', model: door.model(model), tools: door.tools([computerTool({ computer: counted })]) });

    await assert.rejects(door.run(agent, 'Save the form.', { maxTurns: 20 }), (e: unknown) => ToolSpiralError.isInstance(e));
    assert.deepEqual(escalations(events), ['tool_spiral:steer', 'tool_spiral:block', 'tool_spiral:stop']);
    assert.equal(looked, 3, 'the refused and the stopped look took no screenshot');
    assert.deepEqual(printed, [], 'a refused look is not logged by the SDK as a failed action');
  });

  test('a refused action leaves no line on the console either where the SDK is set to log tool data (which would print the refusal unredacted)', async (t) => {
    const printed = printedErrors(t);
    const before = process.env['OPENAI_AGENTS_DONT_LOG_TOOL_DATA'];
    // Read by the SDK each time it logs.
    process.env['OPENAI_AGENTS_DONT_LOG_TOOL_DATA'] = '0';
    t.after(() => {
      if (before === undefined) delete process.env['OPENAI_AGENTS_DONT_LOG_TOOL_DATA'];
      else process.env['OPENAI_AGENTS_DONT_LOG_TOOL_DATA'] = before;
    });
    const { door } = governed('oa-computer-log');
    const { computer } = screen(false);
    const { model } = clickingModel(8);
    const agent = new Agent({ name: 'operator', model: door.model(model), tools: door.tools([computerTool({ computer })]) });
    await assert.rejects(door.run(agent, 'Save the form.', { maxTurns: 20 }), (e: unknown) => ToolSpiralError.isInstance(e));
    assert.deepEqual(printed, []);
  });

  test('a call batching actions runs none after a refused one: what was to be typed into the field the refused click would focus is not typed', async () => {
    const { events, door } = governed('oa-computer-batch');
    const { computer } = screen(false);
    let clicked = 0;
    const typed: string[] = [];
    const { model, requests } = clickingModel(8);
    const batching: Model = {
      ...model,
      getResponse: async (request) => {
        const response = await model.getResponse(request);
        // Each click is followed, in the same call, by typing into what it focused (new text each time: no repeat of its own).
        const output = response.output.map((item) =>
          item.type === 'computer_call'
            ? { ...item, action: undefined, actions: [item.action!, { type: 'type' as const, text: `note ${requests.length}` }] }
            : item,
        );
        return { ...response, output };
      },
    };
    const failing: Computer = {
      ...computer,
      click: async () => {
        clicked += 1;
        throw new Error('no element at (412, 230)');
      },
      type: async (text) => void typed.push(text),
    };
    const agent = new Agent({ name: 'operator', model: door.model(batching), tools: door.tools([computerTool({ computer: failing })]) });

    await assert.rejects(door.run(agent, 'Save the form.', { maxTurns: 20 }), (e: unknown) => ErrorLoopError.isInstance(e));
    assert.deepEqual(escalations(events), ['error_loop:steer', 'error_loop:block', 'error_loop:stop']);
    assert.equal(clicked, 3, 'the refused and the stopped click never reached the computer');
    // A failing click ends its call in the SDK; a refused one ends it here.
    assert.deepEqual(typed, [], 'nothing was typed after a click that did not happen');
    assert.equal(screenshotSent(requests[4]), '', 'the refused call gets no screenshot');
  });

  test('an agent whose computer tool did not go through governed.tools is refused before anything runs', async () => {
    const { door } = governed();
    const { computer, clicks } = screen(false);
    const { model, requests } = clickingModel(8);
    const agent = new Agent({ name: 'operator', model: door.model(model), tools: [computerTool({ computer })] });
    await assert.rejects(door.run(agent, 'Save the form.'), { name: 'InvalidOptionError', option: 'agent "operator".tools["computer_use_preview"]' });
    assert.equal(requests.length, 0);
    assert.equal(clicks.length, 0);
  });
});
