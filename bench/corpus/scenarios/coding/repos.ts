/**
 * Fictional repositories the coding scenarios work in: files with their
 * symbols, and issues with the buggy line, the fix, the failing tests and
 * the errors a wrong edit produces.
 */

type CodeLanguage = 'python' | 'typescript' | 'go' | 'rust';

export interface RepoFile {
  readonly path: string;
  readonly symbols: readonly string[];
  /** Approximate length; the generated file has about this many lines. */
  readonly lines: number;
}

export interface Issue {
  readonly title: string;
  readonly body: string;
  readonly file: string;
  readonly symbol: string;
  readonly testFile: string;
  /** Tests failing before the fix. */
  readonly failing: readonly string[];
  /** Tests in the whole suite. */
  readonly total: number;
  /** Assertion message of the first failing test. */
  readonly assertion: string;
  readonly badLine: string;
  readonly fixLine: string;
  /** A plausible but wrong first attempt. */
  readonly wrongFix: string;
  /** What the compiler or interpreter says about a malformed edit of this line. */
  readonly syntaxError: string;
}

export interface Repo {
  readonly name: string;
  readonly root: string;
  readonly language: CodeLanguage;
  readonly testCommand: string;
  readonly buildCommand: string;
  readonly installCommand: string;
  readonly files: readonly RepoFile[];
  readonly issues: readonly Issue[];
}

export const REPOS: readonly Repo[] = [
  {
    name: 'acme/payments-api',
    root: '/workspace/payments-api',
    language: 'python',
    testCommand: 'pytest -q',
    buildCommand: 'python -m compileall -q src',
    installCommand: 'pip install -e ".[dev]"',
    files: [
      { path: 'src/payments/refunds.py', symbols: ['RefundService', 'create_refund', 'refund_amount', '_validate_window', 'partial_refund'], lines: 520 },
      { path: 'src/payments/amounts.py', symbols: ['CURRENCY_EXPONENTS', 'parse_amount', 'format_amount', 'to_minor_units', 'from_minor_units'], lines: 150 },
      { path: 'src/payments/models.py', symbols: ['Payment', 'Refund', 'PaymentStatus', 'Currency'], lines: 190 },
      { path: 'src/payments/webhooks.py', symbols: ['handle_event', 'verify_signature', '_dispatch', '_load_secret'], lines: 170 },
      { path: 'src/payments/api/routes.py', symbols: ['create_payment', 'refund_payment', 'get_payment', 'list_payments'], lines: 210 },
      { path: 'src/payments/settings.py', symbols: ['Settings', 'load_settings'], lines: 80 },
      {
        path: 'tests/test_refunds.py',
        symbols: ['test_full_refund', 'test_partial_refund', 'test_refund_window_expired', 'test_refund_jpy_full_amount', 'test_refund_jpy_partial'],
        lines: 160,
      },
      {
        path: 'tests/test_amounts.py',
        symbols: ['test_parse_amount', 'test_format_amount', 'test_to_minor_units_usd', 'test_to_minor_units_zero_decimal_currency'],
        lines: 90,
      },
      {
        path: 'tests/test_webhooks.py',
        symbols: ['test_verify_signature_ok', 'test_verify_signature_unicode_payload', 'test_unknown_event_ignored'],
        lines: 110,
      },
    ],
    issues: [
      {
        title: 'Refunds in JPY are 100x too large',
        body: 'Refunding a ¥1,500 payment sends 150000 to the processor. Zero-decimal currencies (JPY, KRW) must not be multiplied by 100 when converting to minor units.',
        file: 'src/payments/amounts.py',
        symbol: 'to_minor_units',
        testFile: 'tests/test_amounts.py',
        failing: [
          'tests/test_amounts.py::test_to_minor_units_zero_decimal_currency',
          'tests/test_refunds.py::test_refund_jpy_full_amount',
          'tests/test_refunds.py::test_refund_jpy_partial',
        ],
        total: 48,
        assertion: 'AssertionError: assert 150000 == 1500',
        badLine: '    return int(amount * 100)',
        fixLine: '    return int(amount * 10 ** CURRENCY_EXPONENTS.get(currency, 2))',
        wrongFix: '    return int(amount * 100) if currency != "JPY" else int(amount)',
        syntaxError: "E999 SyntaxError: unmatched ')'",
      },
      {
        title: 'Webhook signature check fails for payloads with non-ASCII characters',
        body: 'Stripe events with a customer name like "Zoë" are rejected with 400 invalid signature. The payload is encoded as ASCII before hashing.',
        file: 'src/payments/webhooks.py',
        symbol: 'verify_signature',
        testFile: 'tests/test_webhooks.py',
        failing: ['tests/test_webhooks.py::test_verify_signature_unicode_payload'],
        total: 48,
        assertion: "UnicodeEncodeError: 'ascii' codec can't encode character '\\xeb' in position 57: ordinal not in range(128)",
        badLine: "    expected = hmac.new(secret.encode(), payload.encode('ascii'), hashlib.sha256).hexdigest()",
        fixLine: "    expected = hmac.new(secret.encode(), payload.encode('utf-8'), hashlib.sha256).hexdigest()",
        wrongFix: "    expected = hmac.new(secret.encode(), payload.encode('ascii', 'ignore'), hashlib.sha256).hexdigest()",
        syntaxError: "E999 SyntaxError: '(' was never closed",
      },
    ],
  },
  {
    name: 'ledgerly/ledger-core',
    root: '/home/dev/ledger-core',
    language: 'typescript',
    testCommand: 'npx vitest run',
    buildCommand: 'npx tsc --noEmit',
    installCommand: 'npm ci',
    files: [
      { path: 'src/ledger/balance.ts', symbols: ['Balance', 'computeBalance', 'applyEntry', 'sumByAccount'], lines: 430 },
      { path: 'src/ledger/entries.ts', symbols: ['Entry', 'validateEntry', 'isFutureDated', 'normaliseEntry'], lines: 150 },
      { path: 'src/currency/round.ts', symbols: ['roundHalfEven', 'roundTo', 'toCents'], lines: 70 },
      { path: 'src/api/server.ts', symbols: ['createServer', 'postEntry', 'getBalance'], lines: 160 },
      { path: 'src/api/errors.ts', symbols: ['HttpError', 'toResponse'], lines: 60 },
      { path: 'src/index.ts', symbols: ['main'], lines: 40 },
      {
        path: 'test/balance.test.ts',
        symbols: ['computes a simple balance', 'rounds half to even', 'handles negative entries', 'sums by account'],
        lines: 140,
      },
      { path: 'test/entries.test.ts', symbols: ['rejects future-dated entries', 'accepts entries dated today', 'normalises amounts'], lines: 100 },
    ],
    issues: [
      {
        title: 'Balance off by one cent for negative entries',
        body: 'computeBalance returns -10.01 instead of -10.00 for entries [-5.005, -4.995]. roundHalfEven rounds negative halves away from zero.',
        file: 'src/currency/round.ts',
        symbol: 'roundHalfEven',
        testFile: 'test/balance.test.ts',
        failing: ['test/balance.test.ts > computeBalance > handles negative entries', 'test/balance.test.ts > roundHalfEven > rounds half to even'],
        total: 37,
        assertion: 'AssertionError: expected -10.01 to be -10 // Object.is equality',
        badLine: '  const floor = Math.floor(scaled);',
        fixLine: '  const floor = Math.sign(scaled) * Math.floor(Math.abs(scaled));',
        wrongFix: '  const floor = Math.trunc(scaled);',
        syntaxError: "src/currency/round.ts(14,42): error TS1005: ')' expected.",
      },
      {
        title: 'applyEntry accepts entries dated in the future',
        body: 'POST /entries with a date next month is accepted. isFutureDated compares date strings lexicographically in local time.',
        file: 'src/ledger/entries.ts',
        symbol: 'isFutureDated',
        testFile: 'test/entries.test.ts',
        failing: ['test/entries.test.ts > validateEntry > rejects future-dated entries'],
        total: 37,
        assertion: 'AssertionError: expected [Function] to throw an error',
        badLine: '  return entry.date > today.toLocaleDateString();',
        fixLine: '  return Date.parse(entry.date) > Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());',
        wrongFix: '  return new Date(entry.date) > today;',
        syntaxError: "src/ledger/entries.ts(41,3): error TS2322: Type 'number' is not assignable to type 'boolean'.",
      },
    ],
  },
  {
    name: 'tinyhttp/tinyhttp',
    root: '/go/src/github.com/tinyhttp/tinyhttp',
    language: 'go',
    testCommand: 'go test ./...',
    buildCommand: 'go build ./...',
    installCommand: 'go mod download',
    files: [
      { path: 'router.go', symbols: ['Router', 'NewRouter', 'Handle', 'ServeHTTP', 'matchPath'], lines: 540 },
      { path: 'headers.go', symbols: ['parseHeader', 'canonicalKey', 'Header'], lines: 140 },
      { path: 'middleware/logging.go', symbols: ['Logging', 'responseRecorder'], lines: 90 },
      { path: 'middleware/recover.go', symbols: ['Recover'], lines: 50 },
      { path: 'context.go', symbols: ['Context', 'Param', 'JSON'], lines: 120 },
      { path: 'router_test.go', symbols: ['TestStaticRoute', 'TestParamRoute', 'TestTrailingSlash', 'TestMethodNotAllowed'], lines: 180 },
      { path: 'headers_test.go', symbols: ['TestParseHeader', 'TestDuplicateSetCookie'], lines: 80 },
    ],
    issues: [
      {
        title: 'Routes with a trailing slash return 404',
        body: 'Registering "/users/" and requesting "/users/" gives 404 since v0.9. matchPath trims the request path but not the pattern.',
        file: 'router.go',
        symbol: 'matchPath',
        testFile: 'router_test.go',
        failing: ['TestTrailingSlash', 'TestTrailingSlash/nested'],
        total: 29,
        assertion: 'router_test.go:88: GET /users/: got status 404, want 200',
        badLine: '\treqPath = strings.TrimSuffix(reqPath, "/")',
        fixLine: '\treqPath, pattern = strings.TrimSuffix(reqPath, "/"), strings.TrimSuffix(pattern, "/")',
        wrongFix: '\treqPath = strings.TrimSuffix(reqPath, "//")',
        syntaxError: './router.go:142:50: syntax error: unexpected newline in argument list; possibly missing comma or )',
      },
      {
        title: 'parseHeader drops duplicate Set-Cookie headers',
        body: 'Only the last Set-Cookie survives parsing. Multiple values for the same key must be kept.',
        file: 'headers.go',
        symbol: 'parseHeader',
        testFile: 'headers_test.go',
        failing: ['TestDuplicateSetCookie'],
        total: 29,
        assertion: 'headers_test.go:41: len(h["Set-Cookie"]) = 1, want 2',
        badLine: '\t\th[key] = []string{value}',
        fixLine: '\t\th[key] = append(h[key], value)',
        wrongFix: '\t\th[key] = append([]string{}, value)',
        syntaxError: './headers.go:57:14: undefined: vals',
      },
    ],
  },
  {
    name: 'kvstore/kvstore',
    root: '/src/kvstore',
    language: 'rust',
    testCommand: 'cargo test',
    buildCommand: 'cargo build',
    installCommand: 'cargo fetch',
    files: [
      { path: 'src/store.rs', symbols: ['Store', 'get', 'put', 'delete', 'compact'], lines: 610 },
      { path: 'src/wal.rs', symbols: ['Wal', 'append', 'replay', 'read_record'], lines: 220 },
      { path: 'src/ttl.rs', symbols: ['Expiry', 'is_expired'], lines: 70 },
      { path: 'src/lib.rs', symbols: ['Error', 'Result'], lines: 40 },
      { path: 'tests/wal_recovery.rs', symbols: ['replays_all_records', 'replays_unterminated_tail', 'ignores_torn_write'], lines: 120 },
      { path: 'tests/compaction.rs', symbols: ['compaction_keeps_live_keys', 'compaction_respects_ttl_zero'], lines: 90 },
    ],
    issues: [
      {
        title: 'WAL replay skips the last record when the file is not newline-terminated',
        body: 'After a crash the last put is lost if the WAL tail has no trailing newline. read_record treats a missing newline as EOF.',
        file: 'src/wal.rs',
        symbol: 'read_record',
        testFile: 'tests/wal_recovery.rs',
        failing: ['replays_unterminated_tail'],
        total: 22,
        assertion: "thread 'replays_unterminated_tail' panicked at tests/wal_recovery.rs:47:5:\nassertion `left == right` failed\n  left: 2\n right: 3",
        badLine: "        if !line.ends_with('\\n') { return Ok(None); }",
        fixLine: '        if line.is_empty() { return Ok(None); }',
        wrongFix: "        if !line.ends_with('\\n') && line.len() < 4 { return Ok(None); }",
        syntaxError:
          'error[E0308]: mismatched types\n  --> src/wal.rs:88:39\n   |\n88 |         if line.is_empty() { return None; }\n   |                                       ^^^^ expected `Result<Option<Record>, Error>`, found `Option<_>`',
      },
      {
        title: 'compact() deletes keys stored with TTL 0 (meaning no expiry)',
        body: 'TTL 0 is documented as "never expires" but compaction removes such keys. is_expired treats 0 as already expired.',
        file: 'src/ttl.rs',
        symbol: 'is_expired',
        testFile: 'tests/compaction.rs',
        failing: ['compaction_respects_ttl_zero'],
        total: 22,
        assertion: "thread 'compaction_respects_ttl_zero' panicked at tests/compaction.rs:61:9:\ncalled `Option::unwrap()` on a `None` value",
        badLine: '    now >= self.created + self.ttl',
        fixLine: '    self.ttl != 0 && now >= self.created + self.ttl',
        wrongFix: '    now > self.created + self.ttl',
        syntaxError: 'error[E0369]: binary operation `!=` cannot be applied to type `Duration`\n  --> src/ttl.rs:23:14',
      },
    ],
  },
  {
    name: 'shopfront/shopfront',
    root: '/app',
    language: 'python',
    testCommand: 'python manage.py test shop',
    buildCommand: 'python manage.py check',
    installCommand: 'pip install -r requirements.txt',
    files: [
      { path: 'shop/cart/services.py', symbols: ['add_to_cart', 'apply_coupon', 'remove_item', 'cart_total'], lines: 480 },
      { path: 'shop/cart/models.py', symbols: ['Cart', 'CartItem', 'Coupon'], lines: 130 },
      { path: 'shop/orders/views.py', symbols: ['OrderListView', 'OrderDetailView', 'cancel_order'], lines: 170 },
      { path: 'shop/orders/models.py', symbols: ['Order', 'OrderLine', 'OrderStatus'], lines: 160 },
      { path: 'shop/orders/serializers.py', symbols: ['OrderSerializer', 'OrderLineSerializer'], lines: 90 },
      { path: 'shop/settings.py', symbols: ['DATABASES', 'INSTALLED_APPS', 'REST_FRAMEWORK'], lines: 140 },
      {
        path: 'shop/cart/tests/test_services.py',
        symbols: ['test_add_to_cart', 'test_apply_coupon_once', 'test_coupon_survives_update', 'test_cart_total'],
        lines: 150,
      },
      { path: 'shop/orders/tests/test_views.py', symbols: ['test_order_list', 'test_order_list_pagination_unique', 'test_cancel_order'], lines: 120 },
    ],
    issues: [
      {
        title: 'Coupon discount applied twice after updating cart quantity',
        body: 'Updating the quantity of an item re-applies the coupon: a 10% coupon becomes 19%. apply_coupon should be idempotent.',
        file: 'shop/cart/services.py',
        symbol: 'apply_coupon',
        testFile: 'shop/cart/tests/test_services.py',
        failing: [
          'test_coupon_survives_update (shop.cart.tests.test_services.CouponTests)',
          'test_apply_coupon_once (shop.cart.tests.test_services.CouponTests)',
        ],
        total: 64,
        assertion: "AssertionError: Decimal('81.00') != Decimal('90.00')",
        badLine: '    cart.total = cart.total * (1 - coupon.percent / 100)',
        fixLine: '    cart.total = cart.subtotal() * (1 - coupon.percent / 100)',
        wrongFix: '    cart.total = round(cart.total * (1 - coupon.percent / 100), 2)',
        syntaxError: 'SyntaxError: invalid syntax. Perhaps you forgot a comma?',
      },
      {
        title: 'Order list pagination returns the same order on two pages',
        body: 'GET /api/orders/?page=2 repeats orders from page 1 when several orders share created_at. The queryset has no unique ordering.',
        file: 'shop/orders/views.py',
        symbol: 'OrderListView',
        testFile: 'shop/orders/tests/test_views.py',
        failing: ['test_order_list_pagination_unique (shop.orders.tests.test_views.OrderListTests)'],
        total: 64,
        assertion: 'AssertionError: 3 unexpectedly found in [3, 4, 5, 6, 7]',
        badLine: '    queryset = Order.objects.order_by("-created_at")',
        fixLine: '    queryset = Order.objects.order_by("-created_at", "-id")',
        wrongFix: '    queryset = Order.objects.order_by("-created_at").distinct()',
        syntaxError: 'SyntaxError: unterminated string literal (detected at line 23)',
      },
    ],
  },
  {
    name: 'metrics/dashboard-ui',
    root: '/workspace/dashboard-ui',
    language: 'typescript',
    testCommand: 'npx jest',
    buildCommand: 'npm run build',
    installCommand: 'npm install',
    files: [
      { path: 'src/utils/format.ts', symbols: ['formatBytes', 'formatDuration', 'formatPercent'], lines: 90 },
      { path: 'src/components/DateRangePicker.tsx', symbols: ['DateRangePicker', 'clampRange', 'RangeProps'], lines: 450 },
      { path: 'src/hooks/useMetrics.ts', symbols: ['useMetrics', 'buildQuery'], lines: 120 },
      { path: 'src/components/MetricCard.tsx', symbols: ['MetricCard', 'Trend'], lines: 110 },
      { path: 'src/api/client.ts', symbols: ['fetchMetrics', 'ApiError'], lines: 80 },
      { path: 'src/utils/format.test.ts', symbols: ['formats bytes', 'formats durations over a minute', 'formats percent'], lines: 70 },
      { path: 'src/components/DateRangePicker.test.tsx', symbols: ['renders presets', 'rejects end before start'], lines: 120 },
    ],
    issues: [
      {
        title: 'formatDuration shows "60s" instead of "1m"',
        body: 'Durations of exactly 60 seconds render as "60s"; 119 seconds render as "1m 59s" correctly. Off-by-one in the minute threshold.',
        file: 'src/utils/format.ts',
        symbol: 'formatDuration',
        testFile: 'src/utils/format.test.ts',
        failing: ['format › formatDuration › formats durations over a minute'],
        total: 41,
        assertion: 'expect(received).toBe(expected) // Object.is equality\n\nExpected: "1m"\nReceived: "60s"',
        badLine: '  if (seconds > 60) {',
        fixLine: '  if (seconds >= 60) {',
        wrongFix: '  if (seconds > 59.5) {',
        syntaxError: 'src/utils/format.ts(18,3): error TS1128: Declaration or statement expected.',
      },
      {
        title: 'DateRangePicker allows an end date before the start date',
        body: 'Typing an end date earlier than the start keeps the invalid range; clampRange should swap or clamp it.',
        file: 'src/components/DateRangePicker.tsx',
        symbol: 'clampRange',
        testFile: 'src/components/DateRangePicker.test.tsx',
        failing: ['DateRangePicker › rejects end before start'],
        total: 41,
        assertion: 'expect(received).toEqual(expected) // deep equality\n\n- Expected  - 1\n+ Received  + 1',
        badLine: '  return { start, end };',
        fixLine: '  return end < start ? { start: end, end: start } : { start, end };',
        wrongFix: '  return { start, end: end ?? start };',
        syntaxError: "src/components/DateRangePicker.tsx(57,12): error TS2304: Cannot find name 'rng'.",
      },
    ],
  },
  {
    name: 'dataplat/etl-pipeline',
    root: '/opt/etl-pipeline',
    language: 'python',
    testCommand: 'pytest tests -q',
    buildCommand: 'ruff check pipeline',
    installCommand: 'poetry install',
    files: [
      { path: 'pipeline/extract.py', symbols: ['read_csv_batches', 'fetch_api_page'], lines: 140 },
      { path: 'pipeline/transform.py', symbols: ['normalize_row', 'parse_timestamp', 'coerce_types', 'dedupe'], lines: 500 },
      { path: 'pipeline/load.py', symbols: ['load_batch', 'upsert_rows', 'ensure_table'], lines: 160 },
      { path: 'pipeline/config.py', symbols: ['PipelineConfig', 'from_env'], lines: 70 },
      { path: 'pipeline/cli.py', symbols: ['main', 'run_job'], lines: 90 },
      {
        path: 'tests/test_transform.py',
        symbols: ['test_normalize_row', 'test_normalize_row_empty_strings', 'test_parse_timestamp_utc', 'test_parse_timestamp_offset'],
        lines: 130,
      },
      { path: 'tests/test_load.py', symbols: ['test_upsert_rows', 'test_ensure_table_idempotent'], lines: 90 },
    ],
    issues: [
      {
        title: 'parse_timestamp ignores timezone offsets',
        body: '"2024-03-10T09:30:00+02:00" is stored as 09:30 UTC. The offset is dropped by a strptime format without %z.',
        file: 'pipeline/transform.py',
        symbol: 'parse_timestamp',
        testFile: 'tests/test_transform.py',
        failing: ['tests/test_transform.py::test_parse_timestamp_offset'],
        total: 33,
        assertion:
          'AssertionError: assert datetime.datetime(2024, 3, 10, 9, 30, tzinfo=datetime.timezone.utc) == datetime.datetime(2024, 3, 10, 7, 30, tzinfo=datetime.timezone.utc)',
        badLine: '    parsed = datetime.strptime(value[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)',
        fixLine: '    parsed = datetime.fromisoformat(value).astimezone(timezone.utc)',
        wrongFix: '    parsed = datetime.strptime(value, "%Y-%m-%dT%H:%M:%S%z")',
        syntaxError: 'E999 IndentationError: unexpected indent',
      },
      {
        title: 'normalize_row crashes on empty strings',
        body: 'Rows with quantity "" raise ValueError: invalid literal for int(). Empty strings should become None.',
        file: 'pipeline/transform.py',
        symbol: 'normalize_row',
        testFile: 'tests/test_transform.py',
        failing: ['tests/test_transform.py::test_normalize_row_empty_strings'],
        total: 33,
        assertion: "ValueError: invalid literal for int() with base 10: ''",
        badLine: '        row[key] = int(value) if key in INT_COLUMNS else value.strip()',
        fixLine: '        row[key] = None if value == "" else (int(value) if key in INT_COLUMNS else value.strip())',
        wrongFix: '        row[key] = int(value or 0) if key in INT_COLUMNS else value.strip()',
        syntaxError: "E999 SyntaxError: expected ':'",
      },
    ],
  },
  {
    name: 'edge/ratelimit',
    root: '/srv/ratelimit',
    language: 'go',
    testCommand: 'go test -race ./...',
    buildCommand: 'go vet ./...',
    installCommand: 'go mod tidy',
    files: [
      { path: 'limiter.go', symbols: ['TokenBucket', 'NewTokenBucket', 'Allow', 'refill'], lines: 380 },
      { path: 'store/redis.go', symbols: ['RedisStore', 'Take', 'script'], lines: 130 },
      { path: 'store/memory.go', symbols: ['MemoryStore', 'Take'], lines: 70 },
      { path: 'http.go', symbols: ['Middleware', 'keyFunc'], lines: 90 },
      { path: 'limiter_test.go', symbols: ['TestAllowBurst', 'TestRefillAfterClockSkew', 'TestConcurrentAllow'], lines: 140 },
    ],
    issues: [
      {
        title: 'TokenBucket goes negative after a backwards clock jump',
        body: 'When the wall clock moves backwards (NTP), refill computes a negative elapsed time and the bucket never refills.',
        file: 'limiter.go',
        symbol: 'refill',
        testFile: 'limiter_test.go',
        failing: ['TestRefillAfterClockSkew'],
        total: 18,
        assertion: 'limiter_test.go:73: tokens after skew = -4.5, want >= 0',
        badLine: '\telapsed := now.Sub(b.last).Seconds()',
        fixLine: '\telapsed := math.Max(0, now.Sub(b.last).Seconds())',
        wrongFix: '\telapsed := math.Abs(now.Sub(b.last).Seconds())',
        syntaxError: './limiter.go:61:13: undefined: math',
      },
    ],
  },
];
