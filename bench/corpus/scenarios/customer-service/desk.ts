import type { TrajectoryBuilder } from '../../trajectory-builder.ts';
import { startTrajectory, type ScenarioContext } from '../scenario.ts';
import { makeCustomer, userDetails, type Customer } from './world.ts';

/**
 * `terse`: empty model text before tool calls (as gpt-4o agents often do);
 * `chatty`: the model narrates each call to the user.
 */
export type DeskStyle = 'terse' | 'chatty';

/** A customer-service agent session: the builder plus the customer it serves. */
export class Desk {
  readonly b: TrajectoryBuilder;
  readonly customer: Customer;
  readonly style: DeskStyle;

  constructor(b: TrajectoryBuilder, customer: Customer, style: DeskStyle) {
    this.b = b;
    this.customer = customer;
    this.style = style;
  }

  get rng(): TrajectoryBuilder['rng'] {
    return this.b.rng;
  }

  /** The agent's reply to the user (a model step with no tool call). */
  agent(text: string): number {
    return this.b.model(text);
  }

  user(text: string): number {
    return this.b.user(text);
  }

  /**
   * A tool call with its model step; `say` is the text of that step
   * (default: empty when terse, `chatty` otherwise). `say: null` adds the
   * call to the previous model step.
   */
  tool(name: string, args: Record<string, unknown>, result: string, options: { error?: boolean; say?: string | null; chatty?: string } = {}): number {
    if (options.say !== null) this.b.model(options.say ?? (this.style === 'chatty' ? (options.chatty ?? '') : ''));
    return this.b.call(name, args, result, { error: options.error ?? false });
  }

  think(thought: string): number {
    return this.tool('think', { thought }, '');
  }

  /** The usual opening: the user gives an email or name+zip, the agent looks the user up. */
  authenticate(orders: readonly string[], key: 'orders' | 'reservations' = 'orders'): void {
    const c = this.customer;
    if (this.rng.chance(0.6)) {
      this.user(this.rng.pick([`Sure, my email is ${c.email}.`, `It's ${c.email}.`, `My email address is ${c.email}.`]));
      this.tool('find_user_id_by_email', { email: c.email }, c.userId);
    } else {
      this.user(this.rng.pick([`I'm ${c.first} ${c.last}, zip code ${c.address.zip}.`, `My name is ${c.first} ${c.last} and my zip is ${c.address.zip}.`]));
      this.tool('find_user_id_by_name_zip', { first_name: c.first, last_name: c.last, zip: c.address.zip }, c.userId);
    }
    this.tool('get_user_details', { user_id: c.userId }, userDetails(c, orders, key), {
      chatty: `Thank you, ${c.first}. I've found your account. Let me pull up your details.`,
    });
  }
}

export interface DeskSetup {
  readonly variant: string;
  readonly domain: 'retail' | 'airline' | 'telecom';
  /** What the simulated user wants (the task field). */
  readonly task: string;
  /** The user's first message. */
  readonly opening: string;
  /** @default a random customer */
  readonly customer?: Customer;
  /** @default terse or chatty at random */
  readonly style?: DeskStyle;
  /** @default null counts for about half of the runs, as in recorded customer-service logs */
  readonly tokens?: 'counted' | 'null';
  /**
   * Whether the agent first asks the user to identify themselves (not needed for a product search).
   * @default true
   */
  readonly greet?: boolean;
}

/** Starts a session: customer, style and token accounting, then the user's opening turn and the agent's greeting. */
export function startDesk(ctx: ScenarioContext, setup: DeskSetup): Desk {
  const rng = ctx.rng;
  const customer = setup.customer ?? makeCustomer(rng);
  const style = setup.style ?? (rng.chance(0.5) ? 'terse' : 'chatty');
  const b = startTrajectory(ctx, {
    variant: `${setup.variant}; ${setup.domain}; ${style}`,
    task: setup.task,
    tokens: setup.tokens ?? (rng.chance(0.45) ? 'null' : 'counted'),
    systemTokens: rng.int(2800, 4200),
    reasoning: style === 'chatty' ? [0, 0] : [0, 60],
  });
  const desk = new Desk(b, customer, style);
  desk.user(setup.opening);
  if (setup.greet === false) return desk;
  desk.agent(
    setup.domain === 'telecom'
      ? rng.pick(['I can help with that. Could you please give me the phone number of the line?', 'Sure. Which phone number is this about?'])
      : rng.pick([
          `I'd be happy to help. First, I need to verify your identity. Could you please provide your email address, or your first and last name along with your zip code?`,
          `Sure, I can help with that. To get started, could you please share the email address on your account, or your name and zip code?`,
          `I can help you with that. Before we proceed, please provide your email or your full name and zip code so I can locate your account.`,
        ]),
  );
  return desk;
}
