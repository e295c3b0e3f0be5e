import type { CorpusTrajectory } from '../../corpus-trajectory.ts';
import { isoDate, pyJson } from '../../text.ts';
import { CUSTOMER_NAMES, LANGUAGE_NAMES, LANGUAGES, PRODUCT_NAMES as ML_PRODUCT_NAMES, PRODUCT_QUERIES, type Language } from '../multilingual.ts';
import { cycle, type ScenarioContext } from '../scenario.ts';
import { startDesk } from './desk.ts';
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
  userDetails,
  type Flight,
} from './world.ts';

function table(flights: readonly Flight[], cabin: 'economy' | 'business' | 'basic_economy'): string {
  return `| Flight | Departs | Arrives | ${cabin.replace('_', ' ')} |\n|---|---|---|---|\n${flights.map((f) => `| ${f.number} | ${f.depart.slice(0, 5)} | ${f.arrive.slice(0, 5)} | $${f.prices[cabin]} |`).join('\n')}`;
}

/** The same tool over different order ids, dates or products. */
export function csIdSweep(ctx: ScenarioContext): CorpusTrajectory {
  const kind = cycle(['orders', 'dates', 'products'] as const, ctx.index);
  const rng = ctx.rng;
  const customer = makeCustomer(rng);
  const orders = Array.from({ length: rng.int(4, 10) }, () => makeOrder(rng, customer));
  const desk = startDesk(ctx, {
    variant: kind,
    domain: kind === 'dates' ? 'airline' : 'retail',
    customer,
    task:
      kind === 'orders'
        ? 'The user wants to know which of their orders contain electronics that can still be returned.'
        : kind === 'dates'
          ? 'The user is flexible and wants the cheapest economy direct flight over a week.'
          : 'The user compares several products before buying.',
    opening:
      kind === 'orders'
        ? 'Hi, can you go through all my orders and tell me which electronics I can still return?'
        : kind === 'dates'
          ? "Hi, I'm flexible on dates next week — what's the cheapest direct flight?"
          : "I'm trying to choose between a few products, can you give me the options?",
  });
  const calls: number[] = [];
  if (kind === 'orders') {
    desk.authenticate(orders.map((o) => o.orderId));
    for (const [i, o] of orders.entries())
      calls.push(
        desk.tool('get_order_details', { order_id: o.orderId }, orderDetails(o, customer, rng), {
          chatty: i === 0 ? 'Let me check each order.' : 'Let me check the next order.',
        }),
      );
    desk.agent(
      `Here is what I found:\n${orders.map((o) => `- ${o.orderId} (${o.status}): ${o.items.map((it) => it.name).join(', ')}`).join('\n')}\nDelivered orders can be returned; pending ones can be cancelled.`,
    );
  } else if (kind === 'dates') {
    const [o, d] = rng.sample(AIRPORTS, 2) as [string, string];
    desk.user(`From ${o} to ${d}, economy.`);
    const start = rng.int(10, 20);
    const days = rng.int(5, 7);
    const found: Flight[] = [];
    for (let i = 0; i < days; i++) {
      const date = isoDate(2024, 5, start, i);
      const fl = rng.chance(0.2) ? [] : [flight(rng, o, d, date), ...(rng.chance(0.5) ? [flight(rng, o, d, date)] : [])];
      found.push(...fl);
      calls.push(desk.tool('search_direct_flight', { origin: o, destination: d, date }, flightSearch(fl), { chatty: i === 0 ? 'Let me check each day.' : '' }));
    }
    const best = [...found].sort((a, b) => a.prices.economy - b.prices.economy).slice(0, 3);
    desk.agent(`Cheapest direct options over those ${days} days:\n\n${table(best, 'economy')}`);
  } else {
    desk.authenticate(orders.slice(0, 1).map((o) => o.orderId));
    const names = rng.sample(ML_PRODUCT_NAMES as readonly string[], rng.int(3, 5));
    for (const n of names) {
      const p = product(rng, n);
      calls.push(desk.tool('get_product_details', { product_id: p.productId }, productDetails(p), { chatty: `Let me look up the ${n}.` }));
    }
    desk.agent(`Here are the options for ${names.join(', ')}. Which one interests you?`);
  }
  desk.user('Thanks!');
  desk.b.outcome({ reward: 1 });
  desk.b.note(
    `the same tool called ${calls.length}x over different ${kind === 'orders' ? 'order ids' : kind === 'dates' ? 'dates' : 'products'} (steps ${calls.join(', ')}); every result is new`,
  );
  return desk.b.build();
}

/** Injected 503s on lookups: bounded retries that succeed, or moving on. */
export function csBoundedRetry(ctx: ScenarioContext): CorpusTrajectory {
  const rng = ctx.rng;
  const customer = makeCustomer(rng);
  const orders = Array.from({ length: rng.int(2, 4) }, () => makeOrder(rng, customer));
  const desk = startDesk(ctx, {
    variant: 'transient 503s',
    domain: 'retail',
    customer,
    style: 'chatty',
    task: 'The user wants to return non-essential items from recent orders; the order service is flaky (503).',
    opening: 'Hey, I want to return some stuff I bought recently. Can you help?',
  });
  desk.authenticate(orders.map((o) => o.orderId));
  const notes: string[] = [];
  // What the agent says when it moves on goes out with its next call, as one model turn.
  let movedOn = '';
  for (const o of orders) {
    const failures = rng.pick([0, 1, 1, 2, 2, 3]);
    for (let k = 0; k < failures; k++) {
      desk.tool(
        'get_order_details',
        { order_id: o.orderId },
        rng.pick(['Error: 503 Service Unavailable', 'Error: 503 Service Unavailable', 'Error: upstream request timeout']),
        { error: true, say: k === 0 ? `${movedOn}Let me retrieve order ${o.orderId}.` : `I'm sorry, there was a temporary service issue. Let me try again.` },
      );
      if (k === 0) movedOn = '';
    }
    if (failures === 3 && rng.chance(0.4)) {
      movedOn = `I'm still unable to retrieve ${o.orderId} because of a temporary issue. Let me check your other orders in the meantime. `;
      notes.push(`${o.orderId}: 3 transient failures, moves on`);
      continue;
    }
    desk.tool('get_order_details', { order_id: o.orderId }, orderDetails(o, customer, rng), {
      say: failures > 0 ? 'Let me try one more time.' : `${movedOn}Let me retrieve order ${o.orderId}.`,
    });
    movedOn = '';
    notes.push(`${o.orderId}: ${failures} transient failure(s) then success`);
  }
  desk.agent(`${movedOn}I have the details of your orders. Which items would you like to return?`);
  desk.user('Just the water bottle, refund to the original card.');
  desk.agent('Understood. I will process the return of the water bottle to your original payment method. Shall I go ahead?');
  desk.b.outcome({ reward: 1 });
  desk.b.note(`bounded retries after transient 503/timeouts (${notes.join('; ')}); not a loop`);
  return desk.b.build();
}

/** A status re-checked after each action the user reports (telecom troubleshooting, refunds). */
export function csPolling(ctx: ScenarioContext): CorpusTrajectory {
  const kind = cycle(['network-troubleshooting', 'refund-status'] as const, ctx.index);
  const rng = ctx.rng;
  const customer = makeCustomer(rng);
  const phone = `555-${rng.digits(3)}-${rng.digits(4)}`;
  const desk = startDesk(ctx, {
    variant: kind,
    domain: kind === 'network-troubleshooting' ? 'telecom' : 'retail',
    customer,
    task:
      kind === 'network-troubleshooting'
        ? 'The user has no mobile data; they follow troubleshooting steps on the phone.'
        : 'The user wants to know when the refund of a returned item arrives; they ship it during the chat.',
    opening: kind === 'network-troubleshooting' ? 'My phone has had no data since this morning.' : 'Hi, I returned an item and want to know about the refund.',
  });
  const checks: number[] = [];
  if (kind === 'network-troubleshooting') {
    desk.user(`The number is ${phone}.`);
    const states = [
      { status: 'no_service', registered: false, signal_dbm: null, data: 'disconnected' },
      { status: 'no_service', registered: false, signal_dbm: -118, data: 'disconnected' },
      { status: 'limited', registered: true, signal_dbm: -104, data: 'disconnected', apn: 'internet.old' },
      { status: 'connected', registered: true, signal_dbm: -92, data: 'connected', apn: 'internet', network: 'LTE' },
    ];
    const actions = [
      'I turned airplane mode on and off.',
      'I took the SIM card out and put it back in.',
      'I reset the APN settings like you said.',
      'Restarted the phone.',
    ];
    const n = rng.int(3, 4);
    for (let i = 0; i < n; i++) {
      checks.push(
        desk.tool(
          'check_network_status',
          { phone_number: phone },
          pyJson({
            phone_number: phone,
            checked_at: `2024-06-11T09:${String(5 + i * 4).padStart(2, '0')}:${String(rng.int(10, 59))}Z`,
            ...(states[Math.min(i + (n === 3 ? 1 : 0), states.length - 1)] as object),
          }),
        ),
      );
      if (i < n - 1) {
        desk.agent(
          cycle(
            [
              'Your line is not registered on the network. Please toggle airplane mode on and off and tell me when done.',
              'Still no registration. Please remove and reinsert the SIM card.',
              'The line is registered now but data is off: please reset the APN settings under Mobile network > Access point names.',
            ],
            i + (n === 3 ? 1 : 0),
          ),
        );
        desk.user(cycle(actions, i + (n === 3 ? 1 : 0)));
      }
    }
    desk.agent('Your line is connected on LTE with a good signal. Data should work now.');
  } else {
    const order = makeOrder(rng, customer, 'delivered');
    desk.authenticate([order.orderId]);
    const states = ['return requested; waiting for the package', 'in transit to warehouse', 'received at warehouse; inspection pending', 'refund issued'];
    const n = rng.int(3, 4);
    for (let i = 0; i < n; i++) {
      checks.push(
        desk.tool(
          'get_return_status',
          { order_id: order.orderId },
          pyJson({ order_id: order.orderId, return_status: states[Math.min(i, 3)], updated_at: `2024-06-${String(10 + i * 2).padStart(2, '0')}T1${i}:00:00Z` }),
        ),
      );
      if (i < n - 1) {
        desk.agent(`The return shows: ${states[Math.min(i, 3)]}. I'll check again when there is news.`);
        desk.user(
          cycle(
            [
              'I dropped the package at the post office just now.',
              'The tracking says it was delivered to your warehouse.',
              'It has been two days, can you look again?',
            ],
            i,
          ),
        );
      }
    }
    desk.agent('Your refund has been issued to the original payment method; it takes 5–7 business days to appear.');
  }
  desk.b.outcome({ reward: 1 });
  desk.b.note(`the same status check ${checks.length}x (steps ${checks.join(', ')}), each after the user reports an action; the status changes every time`);
  return desk.b.build();
}

/** Paging through a list: cursor or page arguments, or identical next-page calls with new rows. */
export function csPagination(ctx: ScenarioContext): CorpusTrajectory {
  const kind = cycle(['cursor', 'page', 'next-page'] as const, ctx.index);
  const rng = ctx.rng;
  const customer = makeCustomer(rng);
  const desk = startDesk(ctx, {
    variant: kind,
    domain: 'retail',
    customer,
    task: 'A long-time customer wants to find an order from last year with a specific item.',
    opening: "I'm looking for an old order from last year with a desk lamp in it, I don't remember the order number.",
  });
  desk.authenticate([]);
  const pages = rng.int(3, 6);
  const calls: number[] = [];
  let cursor = '';
  let found = '';
  for (let p = 0; p < pages; p++) {
    const orders = Array.from({ length: 5 }, () => makeOrder(rng, customer, 'delivered')).map((o) => ({
      ...o,
      items: o.items.filter((i) => i.name !== 'Desk Lamp'),
    }));
    if (p === pages - 1) {
      const o = orders[rng.int(0, 4)] as (typeof orders)[number];
      found = o.orderId;
      orders[orders.indexOf(o)] = {
        ...o,
        items: [
          ...o.items.slice(1),
          {
            name: 'Desk Lamp',
            productId: rng.digits(10),
            itemId: rng.digits(10),
            price: 49.99,
            options: { color: 'black', brightness: 'high', 'power source': 'USB' },
          },
        ],
      };
    }
    const rows = orders.map((o, i) => ({ order_id: o.orderId, placed_at: isoDate(2024, 6, 1, -(p * 35 + i * 7)), items: o.items.map((it) => it.name) }));
    const next = p < pages - 1 ? rng.hex(12) : null;
    const body = pyJson({ orders: rows, next_cursor: next, page: p + 1 });
    const args: Record<string, unknown> =
      kind === 'cursor'
        ? p === 0
          ? { user_id: customer.userId }
          : { user_id: customer.userId, cursor }
        : kind === 'page'
          ? { user_id: customer.userId, page: p + 1, page_size: 5 }
          : {};
    calls.push(
      desk.tool(kind === 'next-page' && p > 0 ? 'next_page' : 'list_orders', kind === 'next-page' && p === 0 ? { user_id: customer.userId } : args, body, {
        chatty: p === 0 ? 'Let me list your orders.' : 'Let me load the next page.',
      }),
    );
    cursor = next ?? '';
  }
  desk.agent(`I found it: order ${found} contains the desk lamp. Would you like me to start a return or exchange?`);
  desk.b.outcome({ reward: 1 });
  desk.b.note(
    `${pages} pages of the order history (${kind === 'next-page' ? 'identical next_page {} calls' : kind === 'cursor' ? 'cursor from each result' : 'page numbers'}), steps ${calls.join(', ')}; every page has new orders`,
  );
  return desk.b.build();
}

/** A shopper searching different products in their own script. */
export function csNonLatinVaried(ctx: ScenarioContext): CorpusTrajectory {
  const lang = cycle(LANGUAGES, ctx.index) as Language;
  const rng = ctx.rng;
  const names = rng.pick(CUSTOMER_NAMES[lang]);
  const customer = makeCustomer(rng, { first: names.first, last: names.last });
  const picks = rng.sample([0, 1, 2, 3, 4], rng.int(3, 5));
  const desk = startDesk(ctx, {
    greet: false,
    variant: `${LANGUAGE_NAMES[lang]} searches`,
    domain: 'retail',
    customer,
    task: `A ${LANGUAGE_NAMES[lang]}-speaking user compares several different products.`,
    opening: PRODUCT_QUERIES[lang][picks[0] as number] as string,
  });
  const calls: number[] = [];
  for (const [i, q] of picks.entries()) {
    if (i > 0) desk.user(PRODUCT_QUERIES[lang][q] as string);
    const p = product(rng, ML_PRODUCT_NAMES[q]);
    calls.push(
      desk.tool(
        'search_products',
        { query: PRODUCT_QUERIES[lang][q] as string },
        pyJson([
          {
            product_id: p.productId,
            name: p.name,
            variants_available: p.variants.filter((v) => v.available).length,
            price_from: Math.min(...p.variants.map((v) => v.price)),
          },
        ]),
      ),
    );
    desk.agent(`${p.name}: ${p.variants.filter((v) => v.available).length} variants, from $${Math.min(...p.variants.map((v) => v.price))}.`);
  }
  desk.b.outcome({ reward: 1 });
  desk.b.note(`${calls.length} search_products calls with different ${LANGUAGE_NAMES[lang]} queries (steps ${calls.join(', ')}), each with its own result`);
  return desk.b.build();
}

/** Replies with tables and lists of the same shape but different content. */
export function csStructuredText(ctx: ScenarioContext): CorpusTrajectory {
  const rng = ctx.rng;
  const customer = makeCustomer(rng);
  const kind = cycle(['flight-tables', 'order-lists'] as const, ctx.index);
  const desk = startDesk(ctx, {
    variant: kind,
    domain: kind === 'flight-tables' ? 'airline' : 'retail',
    customer,
    style: 'chatty',
    task: kind === 'flight-tables' ? 'The user compares flights for several routes.' : 'The user reviews each of their orders one by one.',
    opening: kind === 'flight-tables' ? 'I need flight options for a multi-city trip.' : 'Can you go over my orders with me one by one?',
  });
  const texts: number[] = [];
  if (kind === 'flight-tables') {
    const legs = rng.int(3, 5);
    let from = rng.pick(AIRPORTS) as string;
    for (let i = 0; i < legs; i++) {
      const to = rng.pick(AIRPORTS.filter((a) => a !== from));
      const date = isoDate(2024, 5, 12 + i * 3);
      desk.user(i === 0 ? `First leg ${from} to ${to} on ${date}.` : `Then ${from} to ${to} on ${date}.`);
      const fl = [flight(rng, from, to, date), flight(rng, from, to, date), flight(rng, from, to, date)];
      desk.tool('search_direct_flight', { origin: from, destination: to, date }, flightSearch(fl), { say: 'Let me search that leg.' });
      texts.push(
        desk.agent(
          `Here are the direct flights from ${from} to ${to} on ${date}:\n\n${table(fl, rng.pick(['economy', 'business']))}\n\n- Cheapest: ${fl[0]?.number}\n- Earliest: ${fl[1]?.number}`,
        ),
      );
      from = to;
    }
  } else {
    const orders = Array.from({ length: rng.int(3, 6) }, () => makeOrder(rng, customer));
    desk.authenticate(orders.map((o) => o.orderId));
    for (const o of orders) {
      desk.tool('get_order_details', { order_id: o.orderId }, orderDetails(o, customer, rng), { say: 'Let me check the next order.' });
      texts.push(
        desk.agent(
          `**Order ${o.orderId}** — status: ${o.status}\n\n| Item | Options | Price |\n|---|---|---|\n${o.items.map((it) => `| ${it.name} | ${Object.values(it.options).join(', ')} | $${it.price} |`).join('\n')}\n\nWould you like to do anything with this order?`,
        ),
      );
      desk.user(rng.pick(['No, next one.', 'Keep it. Next.', 'Fine, next please.']));
    }
  }
  desk.b.outcome({ reward: 1 });
  desk.b.note(
    `${texts.length} replies with the same markdown layout (heading or table and bullets) about different ${kind === 'flight-tables' ? 'legs' : 'orders'}; narration like "Let me check the next order." repeats while the targets change`,
  );
  return desk.b.build();
}

/** A call failing twice with the same error, then changed after the user's input and succeeding. */
export function csNearMiss(ctx: ScenarioContext): CorpusTrajectory {
  const rng = ctx.rng;
  const customer = makeCustomer(rng);
  const res = makeReservation(rng, customer);
  const desk = startDesk(ctx, {
    variant: 'two identical failures then a new payment',
    domain: 'airline',
    customer,
    task: 'The user changes flights and tries payment methods until one works.',
    opening: 'I need to change the flights on one of my reservations.',
  });
  desk.authenticate([res.id], 'reservations');
  desk.tool('get_reservation_details', { reservation_id: res.id }, reservationDetails(res, customer));
  const gift = `gift_card_${rng.digits(7)}`;
  const args = (payment: string): Record<string, unknown> => ({
    reservation_id: res.id,
    cabin: res.cabin,
    flights: res.flights.map((f) => ({ flight_number: f.number, date: isoDate(2024, Number(f.date.slice(5, 7)), Number(f.date.slice(8, 10)), 1) })),
    payment_id: payment,
  });
  desk.user(`Move both flights one day later. Use my gift card ${gift}.`);
  const fails = [
    desk.tool('update_reservation_flights', args(gift), 'Error: gift card balance is not enough', { error: true }),
    desk.tool('update_reservation_flights', args(gift), 'Error: gift card balance is not enough', {
      error: true,
      say: rng.pick(['', 'Let me try that once more.']),
    }),
  ];
  desk.agent('The gift card does not have enough balance for the fare difference. Would you like to use another payment method?');
  const card = (customer.payments[0] as (typeof customer.payments)[number]).id;
  desk.user('Use my credit card then.');
  desk.tool('update_reservation_flights', args(card), reservationDetails(res, customer));
  desk.agent('Your flights have been moved one day later, and the difference was charged to your credit card.');
  desk.b.outcome({ reward: 1 });
  desk.b.note(
    `update_reservation_flights failed twice identically (steps ${fails.join(', ')}), then the user chose another card and it succeeded; only two occurrences`,
  );
  return desk.b.build();
}

/** The same lookup again because the user changed something in between. */
export function csRecheckAfterUser(ctx: ScenarioContext): CorpusTrajectory {
  const rng = ctx.rng;
  const customer = makeCustomer(rng);
  const order = makeOrder(rng, customer, 'pending');
  const desk = startDesk(ctx, {
    variant: 'user changes account data between lookups',
    domain: 'retail',
    customer,
    task: 'The user updates their account in the app during the chat and asks the agent to re-check.',
    opening: 'Hi, I want to ship my pending order to my new address.',
  });
  desk.authenticate([order.orderId]);
  const checks: number[] = [];
  const newStreet = `${rng.int(10, 99)} ${rng.pick(['Birch Way', 'Harbor Street', 'Willow Court'])}`;
  desk.agent('Your account still shows your old address. Please update it in the app, or tell me the new one.');
  desk.user('I just changed it in the app, can you check again?');
  const c2 = { ...customer, address: { ...customer.address, address1: newStreet } };
  checks.push(desk.tool('get_user_details', { user_id: customer.userId }, userDetails(c2, [order.orderId])));
  desk.agent(`I now see ${newStreet}, but the apartment number is missing.`);
  desk.user('Oops. Added "Apt 4B" now. Check once more?');
  const c3 = { ...c2, address: { ...c2.address, address2: 'Apt 4B' } };
  checks.push(desk.tool('get_user_details', { user_id: customer.userId }, userDetails(c3, [order.orderId])));
  desk.tool('modify_pending_order_address', { order_id: order.orderId, ...c3.address }, orderDetails(order, c3, rng), {
    say: 'Now updating the shipping address of your pending order.',
  });
  desk.agent(`Done: order ${order.orderId} will ship to ${newStreet}, Apt 4B.`);
  desk.b.outcome({ reward: 1 });
  desk.b.note(`get_user_details repeated (steps ${checks.join(', ')} after the first) only after the user reports a change; each result differs`);
  return desk.b.build();
}

/** An ordinary request handled without repetition. */
export function csLinear(ctx: ScenarioContext): CorpusTrajectory {
  const kind = cycle(['cancel-pending', 'return-delivered', 'book-flight', 'address-change'] as const, ctx.index);
  const rng = ctx.rng;
  const customer = makeCustomer(rng);
  const order = makeOrder(rng, customer, kind === 'cancel-pending' ? 'pending' : 'delivered');
  const desk = startDesk(ctx, {
    variant: kind,
    domain: kind === 'book-flight' ? 'airline' : 'retail',
    customer,
    task: `The user wants to ${kind.replace('-', ' ')}.`,
    opening: {
      'cancel-pending': 'I want to cancel an order I placed yesterday.',
      'return-delivered': 'I need to return something that arrived broken.',
      'book-flight': 'Can you book me a one-way flight?',
      'address-change': 'I moved and need to update my address.',
    }[kind],
  });
  desk.authenticate([order.orderId]);
  if (kind === 'cancel-pending') {
    desk.tool('get_order_details', { order_id: order.orderId }, orderDetails(order, customer, rng));
    desk.agent(`Order ${order.orderId} is pending. To confirm, you want to cancel it because it is no longer needed?`);
    desk.user('Yes, please.');
    desk.tool('cancel_pending_order', { order_id: order.orderId, reason: 'no longer needed' }, orderDetails({ ...order, status: 'cancelled' }, customer, rng));
    desk.agent('Your order has been cancelled and the refund will go back to the original payment method.');
  } else if (kind === 'return-delivered') {
    desk.tool('get_order_details', { order_id: order.orderId }, orderDetails(order, customer, rng));
    const item = order.items[0] as (typeof order.items)[number];
    desk.agent(`I can return the ${item.name} to your original payment method. Shall I proceed?`);
    desk.user('Yes.');
    desk.tool(
      'return_delivered_order_items',
      { order_id: order.orderId, item_ids: [item.itemId], payment_method_id: order.paymentId },
      pyJson({ order_id: order.orderId, status: 'return requested', return_items: [item.itemId] }),
    );
    desk.agent('The return has been requested. You will receive an email with the return label.');
  } else if (kind === 'book-flight') {
    const [o, d] = rng.sample(AIRPORTS, 2) as [string, string];
    const date = isoDate(2024, 5, rng.int(12, 28));
    desk.user(`${o} to ${d} on ${date}, economy, just me.`);
    const fl = [flight(rng, o, d, date), flight(rng, o, d, date)];
    desk.tool('search_direct_flight', { origin: o, destination: d, date }, flightSearch(fl));
    desk.agent(`I found ${fl[0]?.number} for $${fl[0]?.prices.economy} and ${fl[1]?.number} for $${fl[1]?.prices.economy}. Which would you like?`);
    desk.user('The first one, pay with my card.');
    desk.tool(
      'book_reservation',
      {
        user_id: customer.userId,
        origin: o,
        destination: d,
        flight_type: 'one_way',
        cabin: 'economy',
        flights: [{ flight_number: fl[0]?.number, date }],
        passengers: [{ first_name: customer.first, last_name: customer.last, dob: '1988-03-14' }],
        payment_methods: [{ payment_id: (customer.payments[0] as (typeof customer.payments)[number]).id, amount: fl[0]?.prices.economy }],
        total_baggages: 0,
        nonfree_baggages: 0,
        insurance: 'no',
      },
      pyJson({ reservation_id: rng.code(6), status: 'booked' }),
    );
    desk.agent('Your flight is booked. You will receive a confirmation email shortly.');
  } else {
    const street = `${rng.int(100, 999)} Willow Court`;
    desk.user(`New address: ${street}, ${customer.address.city}, ${customer.address.state} ${customer.address.zip}.`);
    const moved = { ...customer, address: { ...customer.address, address1: street, address2: '' } };
    desk.tool('modify_user_address', { user_id: customer.userId, ...moved.address }, userDetails(moved, [order.orderId]));
    desk.agent('Your default address has been updated.');
  }
  desk.b.outcome({ reward: 1 });
  desk.b.note('authenticate, look up, act once; no repetition');
  return desk.b.build();
}
