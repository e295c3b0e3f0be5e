import type { CorpusTrajectory } from '../../corpus-trajectory.ts';
import { isoDate, pyJson } from '../../text.ts';
import {
  CUSTOMER_NAMES,
  EMPTY_REPLIES,
  LANGUAGE_NAMES,
  LANGUAGES,
  PRODUCT_NAMES as ML_PRODUCT_NAMES,
  PRODUCT_QUERIES,
  type Language,
} from '../multilingual.ts';
import { cycle, type ScenarioContext } from '../scenario.ts';
import { startDesk, type Desk } from './desk.ts';
import {
  AIRPORTS,
  flight,
  flightSearch,
  makeCustomer,
  makeOrder,
  makeReservation,
  orderDetails,
  product,
  productDetails,
  reservationDetails,
} from './world.ts';

const LOOP_THOUGHTS = [
  'I should double-check this before answering the user.',
  'Let me verify the details once more to be sure.',
  'I want to make sure I have the latest information.',
  'The result looks the same; I will check again to be certain.',
];

/** Ends a session that stayed in its loop, or lets the agent get out. */
function close(desk: Desk, recovers: boolean, recoverText: string): void {
  if (recovers) {
    desk.agent(recoverText);
    desk.user(desk.rng.pick(['Thanks, that helps.', 'Okay, thank you.', 'Great, thanks!']));
    desk.agent('You are welcome. Is there anything else I can help you with?');
    desk.b.outcome({ reward: desk.rng.pick([1, 1, 0]) });
  } else {
    if (desk.rng.chance(0.5)) {
      desk.tool(
        'transfer_to_human_agents',
        { summary: `User ${desk.customer.userId} needs help; the agent could not complete the request.` },
        'Transfer successful',
        { say: '' },
      );
      desk.agent('YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON.');
    }
    desk.b.outcome({ reward: 0 });
  }
}

/** The same lookup re-run with identical arguments and identical results. */
export function csSpiralIdentical(ctx: ScenarioContext): CorpusTrajectory {
  const kind = cycle(['refetch-order', 'search-again', 'product-again'] as const, ctx.index);
  const recovers = ctx.index % 3 !== 1;
  const domain = kind === 'search-again' ? 'airline' : 'retail';
  const rng = ctx.rng;
  const customer = makeCustomer(rng);
  const order = makeOrder(rng, customer, 'processed');
  const desk = startDesk(ctx, {
    variant: `${kind}; ${recovers ? 'recovers' : 'runs to the end'}`,
    domain,
    customer,
    task:
      kind === 'search-again'
        ? 'The user wants the cheapest direct flight for a date and will book it if under budget.'
        : kind === 'refetch-order'
          ? `The user wants to know where order ${order.orderId} is.`
          : 'The user wants to exchange an item for another variant.',
    opening:
      kind === 'search-again'
        ? "Hi, I'm looking for a direct flight, can you help?"
        : kind === 'refetch-order'
          ? `Hi, I want to check on my order ${order.orderId}.`
          : 'Hello, I want to exchange an item I bought for a different color.',
  });
  desk.authenticate([order.orderId]);
  const repeats = rng.int(3, 8);
  const useThink = rng.chance(0.6);
  const indices: number[] = [];
  let emit: () => number;
  let what: string;
  if (kind === 'refetch-order') {
    const result = orderDetails(order, customer, rng);
    what = `get_order_details ${order.orderId}`;
    emit = () => desk.tool('get_order_details', { order_id: order.orderId }, result, { chatty: 'Let me check the order status.' });
  } else if (kind === 'search-again') {
    const [o, d] = rng.sample(AIRPORTS, 2) as [string, string];
    const date = isoDate(2024, 5, rng.int(12, 28));
    desk.user(`From ${o} to ${d} on ${date}, economy. My budget is $${rng.int(80, 150)}.`);
    const result = flightSearch([flight(rng, o, d, date), flight(rng, o, d, date)]);
    what = `search_direct_flight ${o}-${d} ${date}`;
    emit = () => desk.tool('search_direct_flight', { origin: o, destination: d, date }, result, { chatty: 'Let me search for direct flights on that date.' });
  } else {
    const p = product(rng);
    desk.user(`It's the ${p.name} from order ${order.orderId}. I want it in another color.`);
    const result = productDetails(p);
    what = `get_product_details ${p.productId}`;
    emit = () => desk.tool('get_product_details', { product_id: p.productId }, result, { chatty: `Let me look up the available ${p.name} options.` });
  }
  for (let k = 0; k < repeats; k++) {
    if (k > 0 && useThink) desk.think(cycle(LOOP_THOUGHTS, k + ctx.index));
    indices.push(emit());
    if (k === 2) desk.b.stuck('tool_spiral', indices[2] as number);
  }
  close(
    desk,
    recovers,
    kind === 'search-again'
      ? 'I found the direct flights for your date. The cheapest economy fare is listed above; would you like me to book it?'
      : kind === 'refetch-order'
        ? `Your order ${order.orderId} has been processed and shipped; the tracking number is in the fulfillment details.`
        : 'Here are the available variants. Which one would you like?',
  );
  desk.b.note(`${what} called ${repeats}x with identical arguments and results (steps ${indices.join(', ')})${useThink ? ', only think() in between' : ''}`);
  return desk.b.build();
}

/** The same call with cosmetic differences: spacing, key order, letter case. */
export function csSpiralVaried(ctx: ScenarioContext): CorpusTrajectory {
  const kind = cycle(['calc-spacing', 'search-key-order', 'name-zip-case'] as const, ctx.index);
  const recovers = ctx.index % 2 === 0;
  const rng = ctx.rng;
  const customer = makeCustomer(rng);
  const res = makeReservation(rng, customer);
  const desk = startDesk(ctx, {
    variant: `${kind}; ${recovers ? 'recovers' : 'runs to the end'}`,
    domain: kind === 'name-zip-case' ? 'retail' : 'airline',
    customer,
    task:
      kind === 'name-zip-case'
        ? 'The user wants to cancel a pending order but gives a zip code that does not match the account.'
        : 'The user wants to know the total cost of upgrading a reservation to business class.',
    opening: kind === 'name-zip-case' ? 'Hi, I need to cancel an order.' : 'Hello, how much would it cost to upgrade my trip to business?',
  });
  const indices: number[] = [];
  const repeats = rng.int(3, 7);
  let what: string;
  if (kind === 'name-zip-case') {
    const wrongZip = String(Number(customer.address.zip) + rng.int(1, 40));
    desk.user(`I'm ${customer.first} ${customer.last}, zip ${wrongZip}.`);
    const spellings = [customer.first, customer.first.toLowerCase(), ` ${customer.first}`, customer.first.toUpperCase(), `${customer.first} `];
    what = `find_user_id_by_name_zip with the name re-cased/re-spaced and the same wrong zip, "Error: user not found" each time`;
    for (let k = 0; k < repeats; k++) {
      indices.push(
        desk.tool(
          'find_user_id_by_name_zip',
          k % 2 === 0
            ? { first_name: cycle(spellings, k), last_name: customer.last, zip: wrongZip }
            : { last_name: customer.last, first_name: cycle(spellings, k), zip: wrongZip },
          'Error: user not found',
          { error: true, chatty: cycle(['Let me look up your account.', 'Let me try that again.', 'Trying once more.'], k) },
        ),
      );
      if (k === 2) desk.b.stuck('tool_spiral', indices[2] as number);
    }
    if (recovers) {
      desk.agent("I couldn't find an account with that name and zip code. Could you double-check the zip code, or give me your email address instead?");
      desk.user(`Oh, sorry — it's ${customer.address.zip}. Or ${customer.email}.`);
      desk.tool('find_user_id_by_name_zip', { first_name: customer.first, last_name: customer.last, zip: customer.address.zip }, customer.userId);
    }
  } else if (kind === 'calc-spacing') {
    desk.authenticate([res.id], 'reservations');
    desk.tool('get_reservation_details', { reservation_id: res.id }, reservationDetails(res, customer));
    const prices = res.flights.map((f) => f.prices.business);
    const sum = prices.reduce((a, b) => a + b, 0);
    const exprs = [prices.join(' + '), prices.join('+'), `(${prices.join(' + ')})`, `${prices.join(' + ')} `, prices.join(' +  ')];
    what = `calculate of the same sum (${prices.join(' + ')}) re-spaced, result ${sum}.0 each time`;
    for (let k = 0; k < repeats; k++) {
      if (k > 0 && rng.chance(0.5))
        desk.think(cycle(['Let me verify the total once more.', 'I should double-check the sum before telling the user.', 'Confirming the calculation.'], k));
      indices.push(
        desk.tool('calculate', { expression: cycle(exprs, k) }, `${sum}.0`, {
          chatty: cycle(['Let me calculate the total.', 'Let me double-check that total.', 'Verifying the amount.'], k),
        }),
      );
      if (k === 2) desk.b.stuck('tool_spiral', indices[2] as number);
    }
  } else {
    desk.authenticate([res.id], 'reservations');
    const f = res.flights[0] as (typeof res.flights)[number];
    const result = flightSearch([flight(rng, f.origin, 'ORD', f.date), flight(rng, 'ORD', f.destination, f.date)]);
    const spellings = [
      { origin: f.origin, destination: f.destination, date: f.date },
      { destination: f.destination, origin: f.origin, date: f.date },
      { date: f.date, origin: f.origin, destination: f.destination },
    ];
    what = 'search_onestop_flight with the same route and date, keys reordered, same results';
    for (let k = 0; k < repeats; k++) {
      if (k > 0 && rng.chance(0.5)) desk.think('I need to find the cheapest business option for this leg.');
      indices.push(desk.tool('search_onestop_flight', cycle(spellings, k), result, { chatty: 'Let me search for one-stop options.' }));
      if (k === 2) desk.b.stuck('tool_spiral', indices[2] as number);
    }
  }
  close(
    desk,
    recovers,
    kind === 'name-zip-case'
      ? 'I found your account. Which order would you like to cancel?'
      : 'The total for the upgrade is shown above. Would you like to proceed?',
  );
  desk.b.note(`${what}: ${indices.length} near-identical calls (steps ${indices.join(', ')})`);
  return desk.b.build();
}

/** The same call failing with the same error; some errors carry a fresh request id. */
export function csErrorLoop(ctx: ScenarioContext): CorpusTrajectory {
  const kind = cycle(
    ['book-payment-mismatch', 'flight-unavailable', 'hallucinated-user', 'item-unavailable', 'telecom-request-id', 'not-delivered'] as const,
    ctx.index,
  );
  const rng = ctx.rng;
  const recovers = rng.chance(0.5);
  const customer = makeCustomer(rng);
  const res = makeReservation(rng, customer);
  const order = makeOrder(rng, customer, kind === 'not-delivered' ? 'pending' : 'pending');
  const domain = kind === 'book-payment-mismatch' || kind === 'flight-unavailable' ? 'airline' : kind === 'telecom-request-id' ? 'telecom' : 'retail';
  const desk = startDesk(ctx, {
    variant: `${kind}; ${recovers ? 'recovers' : 'runs to the end'}`,
    domain,
    customer,
    task: {
      'book-payment-mismatch': 'The user wants to book a round trip and split the payment between a gift card and a credit card.',
      'flight-unavailable': 'The user wants to move the return flight of a reservation to a later date.',
      'hallucinated-user': 'The user wants help with an order but gives only a first name; the agent must ask for more details.',
      'item-unavailable': 'The user wants to change an item in a pending order to a variant that is out of stock.',
      'telecom-request-id': 'The user wants to switch their mobile line to a cheaper plan; the line is suspended for an unpaid bill.',
      'not-delivered': 'The user wants to exchange an item of an order that has not been delivered yet.',
    }[kind],
    opening: {
      'book-payment-mismatch': 'Hi! I want to book a round trip and pay partly with my gift card.',
      'flight-unavailable': 'Hello, I need to push my return flight back a couple of days.',
      'hallucinated-user': `Hi, this is ${customer.first}. Something is wrong with my order.`,
      'item-unavailable': 'Hi, can I change the size of something I ordered? It has not shipped yet.',
      'telecom-request-id': 'Hi, I want to switch my phone line to the cheaper Basic plan.',
      'not-delivered': 'Hey, I want to exchange the headphones in my latest order for another color.',
    }[kind],
  });
  const repeats = rng.int(3, 7);
  const indices: number[] = [];
  let emit: (k: number) => number;
  let what: string;
  switch (kind) {
    case 'book-payment-mismatch': {
      desk.authenticate([res.id], 'reservations');
      const f = res.flights;
      const total = f.reduce((s, x) => s + x.prices.economy, 0);
      const gift = customer.payments.find((p) => p.source === 'gift_card')?.id ?? `gift_card_${rng.digits(7)}`;
      const card = (customer.payments[0] as (typeof customer.payments)[number]).id;
      const paid = total - rng.int(20, 90);
      const args = {
        user_id: customer.userId,
        origin: res.origin,
        destination: res.destination,
        flight_type: 'round_trip',
        cabin: 'economy',
        flights: f.map((x) => ({ flight_number: x.number, date: x.date })),
        passengers: res.passengers,
        payment_methods: [
          { payment_id: gift, amount: 100 },
          { payment_id: card, amount: paid - 100 },
        ],
        total_baggages: 0,
        nonfree_baggages: 0,
        insurance: 'no',
      };
      what = 'book_reservation re-submitted with the same payment split';
      emit = (k) => {
        if (k > 0)
          desk.think(
            cycle(
              [
                'The error indicates a mismatch in the total. I need to verify the amounts.',
                'The error persists. I should check the payment split again.',
                'The repeated error suggests an issue with the amounts; let me retry.',
              ],
              k,
            ),
          );
        return desk.tool('book_reservation', args, `Error: payment amount does not add up, total price is ${total}, but paid ${paid}`, { error: true });
      };
      break;
    }
    case 'flight-unavailable': {
      desk.authenticate([res.id], 'reservations');
      desk.tool('get_reservation_details', { reservation_id: res.id }, reservationDetails(res, customer));
      const back = res.flights[1] as (typeof res.flights)[number];
      const later = isoDate(2024, Number(back.date.slice(5, 7)), Number(back.date.slice(8, 10)), 2);
      const stale = res.flights[0] as (typeof res.flights)[number];
      desk.tool(
        'search_direct_flight',
        { origin: back.origin, destination: back.destination, date: later },
        flightSearch([flight(rng, back.origin, back.destination, later)]),
      );
      desk.user('The first one is fine. Please change it.');
      const args = {
        reservation_id: res.id,
        cabin: res.cabin,
        flights: [
          { flight_number: stale.number, date: stale.date },
          { flight_number: back.number, date: later },
        ],
        payment_id: (customer.payments[0] as (typeof customer.payments)[number]).id,
      };
      what = `update_reservation_flights keeping flight ${back.number} on ${later} (which does not fly that day)`;
      emit = (k) =>
        desk.tool('update_reservation_flights', args, `Error: flight ${back.number} not available on date ${later}`, {
          error: true,
          say: k === 0 ? '' : rng.pick(['', 'Let me try updating the reservation again.']),
        });
      break;
    }
    case 'hallucinated-user': {
      const guess = `${customer.first.toLowerCase()}_${customer.last.toLowerCase()}_${rng.digits(3)}`;
      desk.user(rng.pick([`Can't you just look me up? I'm ${customer.first}.`, `It's ${customer.first}, I don't have my email here.`]));
      what = `get_user_details with the guessed id ${guess}`;
      emit = (k) =>
        desk.tool('get_user_details', { user_id: guess }, 'Error: user not found', {
          error: true,
          chatty: cycle(['Let me pull up your account.', 'There seems to be an issue; let me try again.', 'Let me retry retrieving your details.'], k),
        });
      break;
    }
    case 'item-unavailable': {
      desk.authenticate([order.orderId]);
      desk.tool('get_order_details', { order_id: order.orderId }, orderDetails(order, customer, rng));
      const item = order.items[0] as (typeof order.items)[number];
      const newItem = rng.digits(10);
      desk.user(`The ${item.name}, I want the other size. Item ${newItem} I think.`);
      const args = { order_id: order.orderId, item_ids: [item.itemId], new_item_ids: [newItem], payment_method_id: order.paymentId };
      what = `modify_pending_order_items to the unavailable item ${newItem}`;
      emit = (k) =>
        desk.tool('modify_pending_order_items', args, `Error: new item ${newItem} not found or not available`, {
          error: true,
          say: k === 0 ? '' : rng.pick(['', 'Let me try the modification again.']),
        });
      break;
    }
    case 'telecom-request-id': {
      const phone = `555-${rng.digits(3)}-${rng.digits(4)}`;
      desk.user(`My number is ${phone}.`);
      const line = `L${rng.digits(4)}`;
      desk.tool(
        'get_customer_by_phone',
        { phone_number: phone },
        pyJson({
          customer_id: `C${rng.digits(6)}`,
          name: `${customer.first} ${customer.last}`,
          lines: [{ line_id: line, plan: 'Unlimited Plus', status: 'suspended', suspension_reason: 'unpaid_bill' }],
        }),
      );
      what = `change_plan on a suspended line, error LINE_SUSPENDED with a new request_id and timestamp each time`;
      emit = (k) =>
        desk.tool(
          'change_plan',
          { line_id: line, new_plan: 'Basic' },
          pyJson({
            error: 'LINE_SUSPENDED',
            message: `Line ${line} is suspended; resolve the outstanding balance before changing plans.`,
            request_id: `req_${rng.hex(16)}`,
            timestamp: `2024-06-0${rng.int(1, 9)}T${String(14 + Math.floor(k / 3)).padStart(2, '0')}:${String(10 + k * 2).padStart(2, '0')}:${String(rng.int(10, 59))}Z`,
          }),
          {
            error: true,
            say: k === 0 ? 'Let me switch the plan for you.' : rng.pick(['', 'That did not go through. Let me try again.', 'Retrying the plan change.']),
          },
        );
      break;
    }
    default: {
      desk.authenticate([order.orderId]);
      desk.tool('get_order_details', { order_id: order.orderId }, orderDetails(order, customer, rng));
      const item = order.items[0] as (typeof order.items)[number];
      const args = { order_id: order.orderId, item_ids: [item.itemId], new_item_ids: [rng.digits(10)], payment_method_id: order.paymentId };
      what = 'exchange_delivered_order_items on a pending order';
      emit = (k) =>
        desk.tool('exchange_delivered_order_items', args, 'Error: non-delivered order cannot be exchanged', {
          error: true,
          say: k === 0 ? '' : rng.pick(['', 'Let me try the exchange again.']),
        });
    }
  }
  for (let k = 0; k < repeats; k++) {
    indices.push(emit(k));
    if (k === 2) desk.b.stuck('tool_spiral', indices[2] as number);
  }
  close(
    desk,
    recovers,
    {
      'book-payment-mismatch':
        'I am sorry, the booking keeps failing because the payment amounts do not add up to the total. The gift card covers $100; shall I put the remaining balance on your credit card so the total matches?',
      'flight-unavailable': 'That flight does not operate on the new date. Would you like me to look at other flights on that day?',
      'hallucinated-user': 'I could not find your account. Could you give me your email address or your full name and zip code?',
      'item-unavailable': 'That variant is unfortunately not available. Would you like to see the sizes that are in stock?',
      'telecom-request-id':
        'Your line is suspended because of an unpaid bill, so the plan cannot be changed yet. Would you like to pay the outstanding balance first?',
      'not-delivered': 'Since your order has not been delivered yet, it cannot be exchanged; I can modify the pending order instead. Shall I do that?',
    }[kind],
  );
  desk.b.note(
    `${what}: the same error ${indices.length}x (steps ${indices.join(', ')}), nothing in between that could change it${recovers ? '; then the agent explains and asks the user' : ''}`,
  );
  return desk.b.build();
}

/** Alternating between the same lookups (period 2 or 3) with unchanged results. */
export function csShortCycle(ctx: ScenarioContext): CorpusTrajectory {
  const kind = cycle(['two-reservations', 'search-calc', 'user-orders'] as const, ctx.index);
  const rng = ctx.rng;
  const customer = makeCustomer(rng);
  const resA = makeReservation(rng, customer);
  const resB = makeReservation(rng, customer);
  const keyboard = product(rng, 'Mechanical Keyboard');
  const kbItem = keyboard.variants[0] as (typeof keyboard.variants)[number];
  const baseA = makeOrder(rng, customer);
  const orderA = {
    ...baseA,
    items: [
      { name: keyboard.name, productId: keyboard.productId, itemId: kbItem.itemId, price: kbItem.price, options: kbItem.options },
      ...baseA.items.filter((i) => i.name !== keyboard.name),
    ],
  };
  const baseB = makeOrder(rng, customer);
  const orderB = { ...baseB, items: baseB.items.filter((i) => i.name !== keyboard.name) };
  const recovers = rng.chance(0.5);
  const desk = startDesk(ctx, {
    variant: `${kind}; ${recovers ? 'recovers' : 'runs to the end'}`,
    domain: kind === 'user-orders' ? 'retail' : 'airline',
    customer,
    task:
      kind === 'user-orders'
        ? 'The user wants to know which of two orders contains the keyboard.'
        : 'The user wants to know which reservation is the cheaper one to cancel.',
    opening: kind === 'user-orders' ? 'Hi, which of my orders has the keyboard in it?' : 'Hi, I have two trips booked and want to cancel the cheaper one.',
  });
  desk.authenticate(kind === 'user-orders' ? [orderA.orderId, orderB.orderId] : [resA.id, resB.id], kind === 'user-orders' ? 'orders' : 'reservations');
  const period: (() => number)[] =
    kind === 'two-reservations'
      ? [
          () => desk.tool('get_reservation_details', { reservation_id: resA.id }, reservationDetails(resA, customer)),
          () => desk.tool('get_reservation_details', { reservation_id: resB.id }, reservationDetails(resB, customer)),
        ]
      : kind === 'search-calc'
        ? (() => {
            const f = resA.flights[0] as (typeof resA.flights)[number];
            const direct = flightSearch([]);
            const onestop = flightSearch([flight(rng, f.origin, 'DFW', f.date), flight(rng, 'DFW', f.destination, f.date)]);
            return [
              () => desk.tool('search_direct_flight', { origin: f.origin, destination: f.destination, date: f.date }, direct),
              () => desk.tool('search_onestop_flight', { origin: f.origin, destination: f.destination, date: f.date }, onestop),
              () => desk.tool('calculate', { expression: `${f.prices.economy} - ${f.prices.basic_economy}` }, `${f.prices.economy - f.prices.basic_economy}.0`),
            ];
          })()
        : (() => {
            const a = orderDetails(orderA, customer, rng);
            const b = orderDetails(orderB, customer, rng);
            const details = productDetails(keyboard);
            return [
              () => desk.tool('get_order_details', { order_id: orderA.orderId }, a),
              () => desk.tool('get_order_details', { order_id: orderB.orderId }, b),
              () => desk.tool('get_product_details', { product_id: keyboard.productId }, details),
            ];
          })();
  const rounds = rng.int(3, 6);
  const starts: number[] = [];
  for (let r = 0; r < rounds; r++) {
    period.forEach((emit, i) => {
      const index = emit();
      if (i === 0) starts.push(index);
    });
    if (r === 2) desk.b.stuck('tool_spiral', starts[2] as number);
  }
  close(
    desk,
    recovers,
    kind === 'user-orders' ? `The keyboard is in order ${orderA.orderId}.` : `Reservation ${resB.id} is the cheaper one. Shall I cancel it?`,
  );
  desk.b.note(
    `cycle of period ${period.length} (${kind}) repeated ${rounds}x, periods starting at steps ${starts.join(', ')}; identical results every period, no user turn in between`,
  );
  return desk.b.build();
}

/** The agent's own reply repeats the same paragraph though the user already answered. */
export function csTextRepetition(ctx: ScenarioContext): CorpusTrajectory {
  const rng = ctx.rng;
  const customer = makeCustomer(rng);
  const res = makeReservation(rng, customer);
  const recovers = ctx.index % 2 === 0;
  const desk = startDesk(ctx, {
    variant: recovers ? 'recovers' : 'runs to the end',
    domain: 'airline',
    customer,
    task: `The user (${customer.userId}) wants to add a checked bag to reservation ${res.id} and gives both ids at once.`,
    opening: `Hi, I'd like to add one checked bag to my reservation ${res.id}. My user id is ${customer.userId}.`,
  });
  const paragraphs = [
    `I apologize for the inconvenience. To assist you with adding baggage, I'll need your user ID and the reservation ID. Could you please provide those details so I can proceed?`,
    `I apologize for any inconvenience. To assist you with adding baggage, I need your user ID and reservation ID. Could you please provide those details so I can proceed?`,
    `I apologize for the inconvenience. To help you add baggage, I'll need your user ID and the reservation ID. Could you please provide those details so I can proceed?`,
  ];
  const replies = [
    `I just gave you both: user ${customer.userId}, reservation ${res.id}.`,
    `As I said, it's ${customer.userId} and ${res.id}.`,
    `${customer.userId}. ${res.id}. Same as before.`,
    `Again: ${customer.userId} / ${res.id}.`,
  ];
  const repeats = rng.int(3, 6);
  const indices: number[] = [];
  // The greeting of startDesk asked for identification; the user gave it in the opening already.
  for (let k = 0; k < repeats; k++) {
    desk.user(cycle(replies, k));
    indices.push(desk.agent(rng.chance(0.6) ? (paragraphs[0] as string) : rng.pick(paragraphs)));
    if (k === 2) desk.b.stuck('other', indices[2] as number);
  }
  if (recovers) {
    desk.user(`User id: ${customer.userId}. Reservation: ${res.id}. Please just add the bag.`);
    desk.tool('get_reservation_details', { reservation_id: res.id }, reservationDetails(res, customer));
    desk.tool(
      'update_reservation_baggages',
      { reservation_id: res.id, total_baggages: 2, nonfree_baggages: 1, payment_id: (customer.payments[0] as (typeof customer.payments)[number]).id },
      reservationDetails(res, customer),
    );
    desk.agent('Done — one checked bag has been added to your reservation for $50.');
    desk.b.outcome({ reward: 1 });
  } else {
    desk.user('Forget it.');
    desk.b.outcome({ reward: 0 });
  }
  desk.b.note(
    `the agent asks for ids the user already gave, with the same paragraph ${repeats}x (steps ${indices.join(', ')}); the user's repeats add nothing new`,
  );
  return desk.b.build();
}

/** The same lookup repeated across user turns that add nothing ("ok", "sure"). */
export function csLoopAcrossTurns(ctx: ScenarioContext): CorpusTrajectory {
  const rng = ctx.rng;
  const customer = makeCustomer(rng);
  const order = makeOrder(rng, customer, 'processed');
  const desk = startDesk(ctx, {
    variant: 'user turns say nothing new',
    domain: 'retail',
    customer,
    task: `The user wants the tracking status of ${order.orderId} and replies briefly.`,
    opening: `Hi, where is my order ${order.orderId}?`,
  });
  desk.authenticate([order.orderId]);
  const result = orderDetails(order, customer, rng);
  const repeats = rng.int(3, 6);
  const indices: number[] = [];
  for (let k = 0; k < repeats; k++) {
    if (k > 0) {
      desk.agent(
        cycle(
          [
            `Your order ${order.orderId} has been processed and is on its way. Is there anything else?`,
            `The order is processed; it should arrive soon. Anything else I can check?`,
            `It's processed and shipped. Let me know if you need anything else.`,
          ],
          k,
        ),
      );
      desk.user(rng.pick(EMPTY_REPLIES.en));
    }
    indices.push(desk.tool('get_order_details', { order_id: order.orderId }, result, { chatty: 'Let me check the latest status.' }));
    if (k === 2) desk.b.stuck('tool_spiral', indices[2] as number);
  }
  desk.agent(`Your order ${order.orderId} is processed and in transit.`);
  desk.b.outcome({ reward: 1 });
  desk.b.note(
    `get_order_details ${order.orderId} re-fetched ${repeats}x (steps ${indices.join(', ')}) after user turns like "ok"/"sure" that ask for nothing; same result each time`,
  );
  return desk.b.build();
}

/** A product search or account lookup in a non-Latin script repeated identically. */
export function csNonLatinLoop(ctx: ScenarioContext): CorpusTrajectory {
  const lang = cycle(LANGUAGES, ctx.index) as Language;
  const kind = ctx.index % 2 === 0 ? 'product-search' : 'native-name-lookup';
  const rng = ctx.rng;
  const names = rng.pick(CUSTOMER_NAMES[lang]);
  const customer = makeCustomer(rng, { first: names.first, last: names.last });
  const qIndex = rng.int(0, 4);
  const query = PRODUCT_QUERIES[lang][qIndex] as string;
  const desk = startDesk(ctx, {
    greet: kind !== 'product-search',
    variant: `${LANGUAGE_NAMES[lang]} ${kind}`,
    domain: 'retail',
    customer,
    task:
      kind === 'product-search'
        ? `A ${LANGUAGE_NAMES[lang]}-speaking user looks for "${query}" (${ML_PRODUCT_NAMES[qIndex]}).`
        : `A ${LANGUAGE_NAMES[lang]}-speaking user gives their name in ${LANGUAGE_NAMES[lang]} script; accounts are stored in Latin script.`,
    opening:
      kind === 'product-search'
        ? query
        : {
            ja: '注文について問い合わせたいです。',
            zh: '我想查询一下我的订单。',
            ko: '주문에 대해 문의하고 싶습니다.',
            ru: 'Хочу узнать о своём заказе.',
            ar: 'أريد الاستفسار عن طلبي.',
          }[lang],
  });
  const repeats = rng.int(3, 7);
  const indices: number[] = [];
  const replyBetween = rng.chance(0.5);
  if (kind === 'product-search') {
    const p = product(rng, ML_PRODUCT_NAMES[qIndex]);
    const result = pyJson([{ product_id: p.productId, name: p.name, variants_available: p.variants.filter((v) => v.available).length }]);
    for (let k = 0; k < repeats; k++) {
      if (k > 0 && replyBetween) {
        desk.agent(
          cycle(
            ['検索結果を確認しています。', '正在为您查询。', '검색 결과를 확인하고 있습니다.', 'Проверяю результаты поиска.', 'أتحقق من نتائج البحث.'],
            LANGUAGES.indexOf(lang),
          ),
        );
        desk.user(rng.pick(EMPTY_REPLIES[lang]));
      }
      indices.push(desk.tool('search_products', { query }, result));
      if (k === 2) desk.b.stuck('tool_spiral', indices[2] as number);
    }
  } else {
    const [last, first] =
      names.native.split(' ').length === 2 && (lang === 'ja' || lang === 'zh' || lang === 'ko')
        ? (names.native.split(' ') as [string, string])
        : [names.native.split(' ')[1] ?? names.native, names.native.split(' ')[0] ?? names.native];
    desk.user(`${names.native}${lang === 'ja' || lang === 'zh' ? '、' : ', '}${customer.address.zip}`);
    for (let k = 0; k < repeats; k++) {
      if (k > 0 && replyBetween) {
        desk.agent(
          cycle(
            [
              'アカウントを確認しています。少々お待ちください。',
              '正在查询您的账户，请稍候。',
              '계정을 확인하고 있습니다. 잠시만 기다려 주세요.',
              'Проверяю вашу учётную запись, подождите.',
              'أتحقق من حسابك، يرجى الانتظار.',
            ],
            LANGUAGES.indexOf(lang),
          ),
        );
        desk.user(rng.pick(EMPTY_REPLIES[lang]));
      }
      indices.push(
        desk.tool('find_user_id_by_name_zip', { first_name: first, last_name: last, zip: customer.address.zip }, 'Error: user not found', { error: true }),
      );
      if (k === 2) desk.b.stuck('tool_spiral', indices[2] as number);
    }
  }
  close(
    desk,
    rng.chance(0.5),
    kind === 'product-search'
      ? 'Here is the product I found; would you like the details?'
      : 'I could not find your account with that name. Could you give me your name in Latin letters, or your email address?',
  );
  desk.b.note(
    `${kind === 'product-search' ? `search_products "${query}"` : `find_user_id_by_name_zip with the ${LANGUAGE_NAMES[lang]}-script name`} repeated ${repeats}x with identical arguments and result (steps ${indices.join(', ')})${replyBetween ? '; the user replies in between say nothing new' : ''}`,
  );
  return desk.b.build();
}
