import type { Rng } from '../../prng.ts';
import { isoDate, pyJson } from '../../text.ts';

/**
 * A small retail, airline and telecom back office for the customer-service
 * scenarios, shaped after the tools and results of public customer-service
 * agent benchmarks: users, orders, products, reservations, flights, lines.
 */

const FIRST = [
  'mia',
  'yusuf',
  'ethan',
  'olivia',
  'noah',
  'sofia',
  'liam',
  'amelia',
  'lucas',
  'chen',
  'aarav',
  'fatima',
  'isabella',
  'mohamed',
  'emma',
  'raj',
  'daiki',
  'anya',
  'omar',
  'harper',
];
const LAST = [
  'garcia',
  'rossi',
  'johnson',
  'silva',
  'kim',
  'patel',
  'nguyen',
  'mueller',
  'smith',
  'lopez',
  'khan',
  'brown',
  'wilson',
  'sanchez',
  'ito',
  'ivanova',
  'hassan',
  'moore',
];
const STREETS = [
  'Main Street',
  'Elm Street',
  'Oak Avenue',
  'Pine Lane',
  'Maple Drive',
  'Cedar Road',
  'Hillcrest Drive',
  'Lakeview Court',
  'River Road',
  'Sunset Boulevard',
];
const CITIES = [
  { city: 'Indianapolis', state: 'IN', zip: '46229' },
  { city: 'Los Angeles', state: 'CA', zip: '91365' },
  { city: 'Austin', state: 'TX', zip: '78712' },
  { city: 'Denver', state: 'CO', zip: '80202' },
  { city: 'Seattle', state: 'WA', zip: '98109' },
  { city: 'Philadelphia', state: 'PA', zip: '19122' },
  { city: 'Charlotte', state: 'NC', zip: '28243' },
  { city: 'Columbus', state: 'OH', zip: '43222' },
  { city: 'San Jose', state: 'CA', zip: '95131' },
];

interface Address {
  readonly address1: string;
  readonly address2: string;
  readonly city: string;
  readonly country: string;
  readonly state: string;
  readonly zip: string;
}

export interface Customer {
  readonly first: string;
  readonly last: string;
  readonly userId: string;
  readonly email: string;
  readonly address: Address;
  readonly payments: readonly { id: string; source: string; extra: Record<string, unknown> }[];
}

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export function makeCustomer(rng: Rng, names?: { first: string; last: string }): Customer {
  const first = (names?.first ?? rng.pick(FIRST)).toLowerCase();
  const last = (names?.last ?? rng.pick(LAST)).toLowerCase();
  const place = rng.pick(CITIES);
  const payments = [
    { id: `credit_card_${rng.digits(7)}`, source: 'credit_card', extra: { brand: rng.pick(['visa', 'mastercard']), last_four: rng.digits(4) } },
    ...(rng.chance(0.6) ? [{ id: `paypal_${rng.digits(7)}`, source: 'paypal', extra: {} }] : []),
    ...(rng.chance(0.6) ? [{ id: `gift_card_${rng.digits(7)}`, source: 'gift_card', extra: { balance: rng.int(10, 300) } }] : []),
  ];
  return {
    first: cap(first),
    last: cap(last),
    userId: `${first}_${last}_${rng.digits(4)}`,
    email: `${first}.${last}${rng.digits(4)}@example.com`,
    address: {
      address1: `${rng.int(100, 999)} ${rng.pick(STREETS)}`,
      address2: `Suite ${rng.int(100, 999)}`,
      city: place.city,
      country: 'USA',
      state: place.state,
      zip: place.zip,
    },
    payments,
  };
}

export function userDetails(c: Customer, orders: readonly string[], key: 'orders' | 'reservations' = 'orders'): string {
  return pyJson({
    name: { first_name: c.first, last_name: c.last },
    address: c.address,
    email: c.email,
    payment_methods: Object.fromEntries(c.payments.map((p) => [p.id, { source: p.source, ...p.extra, id: p.id }])),
    [key]: orders,
  });
}

export interface Product {
  readonly name: string;
  readonly productId: string;
  readonly variants: readonly { itemId: string; options: Record<string, string>; price: number; available: boolean }[];
}

const CATALOG: readonly { name: string; options: Record<string, readonly string[]>; price: [number, number] }[] = [
  {
    name: 'Wireless Earbuds',
    options: { color: ['black', 'white', 'blue'], 'battery life': ['6 hours', '8 hours'], 'water resistance': ['IPX4', 'IPX7', 'not resistant'] },
    price: [60, 260],
  },
  {
    name: 'Mechanical Keyboard',
    options: { 'switch type': ['linear', 'tactile', 'clicky'], backlight: ['RGB', 'white', 'none'], size: ['full size', '80%'] },
    price: [90, 290],
  },
  {
    name: 'Water Bottle',
    options: { capacity: ['500ml', '750ml', '1000ml'], material: ['stainless steel', 'plastic', 'glass'], color: ['green', 'black', 'red'] },
    price: [15, 60],
  },
  { name: 'Action Camera', options: { resolution: ['4K', '1080p', '5K'], waterproof: ['yes', 'no'], color: ['black', 'silver'] }, price: [180, 520] },
  {
    name: 'Backpack',
    options: { color: ['grey', 'navy', 'black'], size: ['small', 'medium', 'large'], material: ['nylon', 'polyester', 'leather'] },
    price: [40, 220],
  },
  {
    name: 'Gaming Mouse',
    options: { color: ['RGB', 'black', 'white'], 'sensor type': ['optical', 'laser'], connectivity: ['wired', 'wireless'] },
    price: [40, 180],
  },
  {
    name: 'Electric Kettle',
    options: { capacity: ['1L', '1.5L', '2L'], material: ['glass', 'stainless steel', 'plastic'], color: ['white', 'black', 'silver'] },
    price: [25, 160],
  },
  {
    name: 'Running Shoes',
    options: { size: ['8', '9', '10', '11'], color: ['black', 'red', 'white'], material: ['mesh', 'leather', 'synthetic'] },
    price: [70, 220],
  },
  {
    name: 'Desk Lamp',
    options: { color: ['white', 'black', 'silver'], brightness: ['low', 'medium', 'high'], 'power source': ['USB', 'AC adapter', 'battery'] },
    price: [25, 150],
  },
  {
    name: 'Noise-Cancelling Headphones',
    options: { color: ['black', 'white', 'blue'], 'battery life': ['20 hours', '30 hours'], connectivity: ['wireless', 'wired'] },
    price: [90, 420],
  },
  { name: 'USB-C Charger 65W', options: { ports: ['1', '2', '3'], color: ['white', 'black'], 'cable included': ['yes', 'no'] }, price: [25, 80] },
  {
    name: 'Tablet',
    options: { 'screen size': ['8-inch', '10-inch', '12-inch'], storage: ['64GB', '128GB', '256GB'], color: ['black', 'silver', 'gold'] },
    price: [200, 900],
  },
];

/** A product with its variants; deterministic per name. */
export function product(rng: Rng, name?: string): Product {
  const spec = CATALOG.find((c) => c.name === name) ?? rng.pick(CATALOG);
  const variants = Array.from({ length: rng.int(3, 6) }, () => ({
    itemId: rng.digits(10),
    options: Object.fromEntries(Object.entries(spec.options).map(([k, v]) => [k, rng.pick(v)])),
    price: Math.round(rng.float(spec.price[0], spec.price[1]) * 100) / 100,
    available: rng.chance(0.7),
  }));
  return { name: spec.name, productId: rng.digits(10), variants };
}

export function productDetails(p: Product): string {
  return pyJson({
    name: p.name,
    product_id: p.productId,
    variants: Object.fromEntries(p.variants.map((v) => [v.itemId, { item_id: v.itemId, options: v.options, available: v.available, price: v.price }])),
  });
}

export interface Order {
  readonly orderId: string;
  readonly status: 'pending' | 'processed' | 'delivered' | 'cancelled';
  readonly items: readonly { name: string; productId: string; itemId: string; price: number; options: Record<string, string> }[];
  readonly paymentId: string;
}

export function makeOrder(rng: Rng, c: Customer, status?: Order['status']): Order {
  const items = Array.from({ length: rng.int(1, 4) }, () => {
    const p = product(rng);
    const v = rng.pick(p.variants);
    return { name: p.name, productId: p.productId, itemId: v.itemId, price: v.price, options: v.options };
  });
  return {
    orderId: `#W${rng.digits(7)}`,
    status: status ?? rng.pick(['pending', 'processed', 'delivered', 'delivered']),
    items,
    paymentId: (c.payments[0] as Customer['payments'][number]).id,
  };
}

export function orderDetails(o: Order, c: Customer, rng: Rng): string {
  const total = Math.round(o.items.reduce((s, i) => s + i.price, 0) * 100) / 100;
  return pyJson({
    order_id: o.orderId,
    user_id: c.userId,
    address: c.address,
    items: o.items.map((i) => ({ name: i.name, product_id: i.productId, item_id: i.itemId, price: i.price, options: i.options })),
    fulfillments: o.status === 'pending' ? [] : [{ tracking_id: [rng.digits(12)], item_ids: o.items.map((i) => i.itemId) }],
    status: o.status,
    payment_history: [{ transaction_type: 'payment', amount: total, payment_method_id: o.paymentId }],
  });
}

export const AIRPORTS = ['JFK', 'SFO', 'LAX', 'ORD', 'ATL', 'SEA', 'BOS', 'DEN', 'MIA', 'DFW', 'PHX', 'LAS', 'EWR', 'MSP', 'DTW', 'IAH', 'CLT', 'PHL'] as const;

export interface Flight {
  readonly number: string;
  readonly origin: string;
  readonly destination: string;
  readonly date: string;
  readonly depart: string;
  readonly arrive: string;
  readonly prices: { basic_economy: number; economy: number; business: number };
  readonly seats: { basic_economy: number; economy: number; business: number };
}

export function flight(rng: Rng, origin: string, destination: string, date: string): Flight {
  const h = rng.int(0, 20);
  const d = rng.int(2, 6);
  return {
    number: `HAT${String(rng.int(1, 299)).padStart(3, '0')}`,
    origin,
    destination,
    date,
    depart: `${String(h).padStart(2, '0')}:00:00`,
    arrive: `${String((h + d) % 24).padStart(2, '0')}:${rng.pick(['00', '30'])}:00${h + d >= 24 ? '+1' : ''}`,
    prices: { basic_economy: rng.int(50, 100), economy: rng.int(100, 200), business: rng.int(200, 500) },
    seats: { basic_economy: rng.int(0, 20), economy: rng.int(0, 20), business: rng.int(0, 20) },
  };
}

export function flightSearch(flights: readonly Flight[]): string {
  return pyJson(
    flights.map((f) => ({
      flight_number: f.number,
      origin: f.origin,
      destination: f.destination,
      scheduled_departure_time_est: f.depart,
      scheduled_arrival_time_est: f.arrive,
      status: 'available',
      available_seats: f.seats,
      prices: f.prices,
    })),
  );
}

export interface Reservation {
  readonly id: string;
  readonly origin: string;
  readonly destination: string;
  readonly cabin: 'basic_economy' | 'economy' | 'business';
  readonly flights: readonly Flight[];
  readonly passengers: readonly { first_name: string; last_name: string; dob: string }[];
}

export function makeReservation(rng: Rng, c: Customer): Reservation {
  const [o, d] = rng.sample(AIRPORTS, 2) as [string, string];
  const date = isoDate(2024, 5, rng.int(10, 28));
  const back = isoDate(2024, 5, rng.int(10, 28), rng.int(2, 6));
  return {
    id: rng.code(6),
    origin: o,
    destination: d,
    cabin: rng.pick(['basic_economy', 'economy', 'business']),
    flights: [flight(rng, o, d, date), flight(rng, d, o, back)],
    passengers: [{ first_name: c.first, last_name: c.last, dob: isoDate(1960, 1, rng.int(1, 300), rng.int(0, 12000)) }],
  };
}

export function reservationDetails(r: Reservation, c: Customer): string {
  return pyJson({
    reservation_id: r.id,
    user_id: c.userId,
    origin: r.origin,
    destination: r.destination,
    flight_type: 'round_trip',
    cabin: r.cabin,
    flights: r.flights.map((f) => ({ origin: f.origin, destination: f.destination, flight_number: f.number, date: f.date, price: f.prices[r.cabin] })),
    passengers: r.passengers,
    payment_history: [
      { payment_id: (c.payments[0] as Customer['payments'][number]).id, amount: r.flights.reduce((s, f) => s + f.prices[r.cabin], 0) * r.passengers.length },
    ],
    created_at: `2024-05-0${rng0(r.id)}T10:11:12`,
    total_baggages: 1,
    nonfree_baggages: 0,
    insurance: 'no',
  });
}

function rng0(id: string): number {
  return (id.charCodeAt(0) % 8) + 1;
}
