/**
 * Research questions over document collections: passages with ids, a set of
 * near-duplicate queries that a fixated agent cycles through (they all
 * retrieve the same passages), and a chain of genuinely refined queries that
 * each retrieve something new.
 */

export interface Passage {
  readonly id: string;
  readonly text: string;
}

export interface Topic {
  readonly collection: string;
  readonly question: string;
  readonly passages: readonly Passage[];
  /** Paraphrases of one query; all retrieve `fixationHits`. */
  readonly paraphrases: readonly string[];
  readonly fixationHits: readonly string[];
  /** Refined queries, each retrieving its own passages. */
  readonly refinements: readonly { query: string; hits: readonly string[] }[];
  /** Passages that only exist after a later ingestion. */
  readonly ingested: readonly Passage[];
  readonly ingestEvent: string;
  readonly answer: string;
}

export const TOPICS: readonly Topic[] = [
  {
    collection: 'postgres-docs',
    question: 'Why does autovacuum never run on our 400 GB events table, and what should we change?',
    passages: [
      {
        id: 'pg-routine-vacuum-02',
        text: 'Autovacuum processes a table when the number of dead tuples exceeds autovacuum_vacuum_threshold + autovacuum_vacuum_scale_factor * reltuples. With the default scale factor of 0.2, a table of 2 billion rows needs 400 million dead tuples before it is vacuumed.',
      },
      {
        id: 'pg-routine-vacuum-03',
        text: 'For very large tables it is common to set a per-table scale factor of 0.01 or lower, or a fixed threshold, with ALTER TABLE ... SET (autovacuum_vacuum_scale_factor = 0.01).',
      },
      {
        id: 'pg-runtime-config-autovacuum-01',
        text: 'autovacuum_vacuum_cost_limit (integer): the cost limit used in automatic VACUUM operations. If -1 is specified (the default), the regular vacuum_cost_limit value is used.',
      },
      {
        id: 'pg-runtime-config-autovacuum-04',
        text: 'autovacuum_max_workers (integer): maximum number of autovacuum processes (other than the launcher) that may be running at any one time. The default is three.',
      },
      {
        id: 'pg-monitoring-stat-all-tables',
        text: 'pg_stat_all_tables.n_dead_tup: estimated number of dead rows. last_autovacuum: last time at which this table was vacuumed by the autovacuum daemon.',
      },
      {
        id: 'pg-routine-vacuum-07',
        text: 'Long-running transactions hold back the xmin horizon; VACUUM cannot remove tuples that may still be visible to them, so autovacuum may run but reclaim nothing.',
      },
      {
        id: 'pg-wiki-vacuum-tuning',
        text: 'Symptoms of an overdue vacuum on large append-mostly tables: growing n_dead_tup, index bloat, and slow sequential scans. Lowering the scale factor is usually the first fix.',
      },
      {
        id: 'pg-runtime-config-autovacuum-06',
        text: 'autovacuum_vacuum_insert_threshold (PostgreSQL 13+): triggers vacuum on insert-only tables so that visibility maps are kept up to date.',
      },
      {
        id: 'pg-routine-vacuum-11',
        text: 'Replication slots that are not consumed also hold back the xmin horizon and prevent cleanup; check pg_replication_slots for inactive slots.',
      },
    ],
    paraphrases: [
      'autovacuum not running large table',
      'why is autovacuum not running on a large table',
      'autovacuum does not run on big table postgres',
      'autovacuum not triggering on large table',
      'postgres autovacuum never runs large table',
      'autovacuum not running on large tables',
      'large table autovacuum not running why',
    ],
    fixationHits: ['pg-routine-vacuum-02', 'pg-wiki-vacuum-tuning', 'pg-runtime-config-autovacuum-04'],
    refinements: [
      { query: 'autovacuum scale factor per-table setting', hits: ['pg-routine-vacuum-03', 'pg-routine-vacuum-02'] },
      { query: 'how to check when a table was last autovacuumed', hits: ['pg-monitoring-stat-all-tables'] },
      { query: 'vacuum cannot remove dead tuples long running transaction', hits: ['pg-routine-vacuum-07', 'pg-routine-vacuum-11'] },
      { query: 'autovacuum insert-only tables threshold', hits: ['pg-runtime-config-autovacuum-06'] },
      { query: 'autovacuum cost limit throttling', hits: ['pg-runtime-config-autovacuum-01'] },
    ],
    ingested: [
      {
        id: 'dba-runbook-events-table',
        text: 'Runbook (DBA team, 2024-06): the events table has autovacuum_enabled=false since the 2023 migration; re-enable it with ALTER TABLE events SET (autovacuum_enabled = true) during a low-traffic window.',
      },
    ],
    ingestEvent: '[ingestion] 1 new document added to "postgres-docs": dba-runbook-events-table.md',
    answer:
      'With the default scale factor autovacuum waits for ~20% dead rows; set a per-table scale factor (0.01) or threshold, and check for long transactions or stale replication slots holding back cleanup.',
  },
  {
    collection: 'k8s-docs',
    question: 'Our payment pods get evicted every night around 02:00. Why, and how do we stop it?',
    passages: [
      {
        id: 'k8s-node-pressure-eviction-01',
        text: 'The kubelet monitors resources like memory, disk space and filesystem inodes on your cluster nodes. When one or more of these reach specific consumption levels, the kubelet can proactively fail one or more pods on the node to reclaim resources.',
      },
      {
        id: 'k8s-node-pressure-eviction-04',
        text: 'The kubelet uses the pod QoS class and priority to rank pods for eviction: BestEffort and Burstable pods that exceed their requests are evicted first.',
      },
      { id: 'k8s-pod-qos-02', text: 'A pod gets the Guaranteed QoS class when every container has memory and CPU limits equal to its requests.' },
      {
        id: 'k8s-node-pressure-eviction-07',
        text: 'Hard eviction thresholds have no grace period: memory.available<100Mi triggers immediate eviction by default.',
      },
      {
        id: 'k8s-cronjob-01',
        text: 'A CronJob creates Jobs on a repeating schedule. Jobs created by a CronJob run on whatever node the scheduler picks and compete for node resources.',
      },
      {
        id: 'k8s-priority-preemption-02',
        text: 'PriorityClass lets you mark pods as more important; during node-pressure eviction the kubelet considers priority after QoS.',
      },
      {
        id: 'k8s-resource-mgmt-03',
        text: 'If a container exceeds its memory limit it is OOMKilled; this is different from eviction, which happens at node level.',
      },
      { id: 'k8s-pdb-01', text: 'A PodDisruptionBudget limits voluntary disruptions such as drains; it does not protect against node-pressure eviction.' },
    ],
    paraphrases: [
      'pods evicted at night',
      'why are pods evicted every night',
      'pod eviction nightly kubernetes',
      'kubernetes pods get evicted at night why',
      'pods evicted every night kubernetes',
      'nightly pod eviction reason',
    ],
    fixationHits: ['k8s-node-pressure-eviction-01', 'k8s-pdb-01', 'k8s-resource-mgmt-03'],
    refinements: [
      { query: 'eviction order QoS class Burstable BestEffort', hits: ['k8s-node-pressure-eviction-04', 'k8s-pod-qos-02'] },
      { query: 'cronjob resource contention node memory', hits: ['k8s-cronjob-01'] },
      { query: 'hard eviction threshold memory.available default', hits: ['k8s-node-pressure-eviction-07'] },
      { query: 'priorityclass eviction ranking', hits: ['k8s-priority-preemption-02'] },
    ],
    ingested: [
      {
        id: 'platform-postmortem-0412',
        text: 'Postmortem 2024-04-12: the nightly analytics-export CronJob (no memory limits) lands on the payment nodes at 02:00 and pushes them under memory pressure; payment pods are Burstable and get evicted.',
      },
    ],
    ingestEvent: '[ingestion] 1 new document added to "k8s-docs": postmortem-2024-04-12.md',
    answer:
      'Node-pressure eviction ranks Burstable pods first; a nightly job competing for memory can trigger it. Make the payment pods Guaranteed (limits = requests), give them a higher PriorityClass, and constrain the job.',
  },
  {
    collection: 'hr-policies',
    question: 'What is the hotel limit per night for business trips to London, and does it include breakfast?',
    passages: [
      {
        id: 'travel-policy-2023-s4',
        text: 'Section 4.2 Accommodation: employees should book through the travel portal. The nightly limit is EUR 180 for Tier 1 cities and EUR 130 elsewhere, taxes included.',
      },
      { id: 'travel-policy-2023-s4b', text: 'Tier 1 cities: London, Paris, New York, Tokyo, Zurich, San Francisco.' },
      {
        id: 'travel-policy-2023-s5',
        text: 'Section 5 Meals: breakfast included in the room rate is not reimbursed separately; if not included, breakfast is covered by the daily meal allowance.',
      },
      {
        id: 'expense-faq-07',
        text: 'FAQ: Can I exceed the hotel limit? Only with prior approval from your cost-centre manager, documented in the travel request.',
      },
      {
        id: 'expense-faq-11',
        text: 'FAQ: Which currency applies? Limits are set in EUR; amounts in other currencies are converted at the rate on the day of booking.',
      },
      { id: 'travel-policy-2023-s2', text: 'Section 2 Approval: all trips need an approved travel request before booking.' },
    ],
    paraphrases: [
      'hotel limit London per night',
      'London hotel limit per night',
      'per night hotel limit for London',
      'what is the hotel limit in London per night',
      'hotel nightly limit London',
      'London hotel cost limit per night business trip',
    ],
    fixationHits: ['travel-policy-2023-s4', 'travel-policy-2023-s2', 'expense-faq-07'],
    refinements: [
      { query: 'Tier 1 cities list travel policy', hits: ['travel-policy-2023-s4b'] },
      { query: 'breakfast included in room rate reimbursement', hits: ['travel-policy-2023-s5'] },
      { query: 'hotel limit currency conversion', hits: ['expense-faq-11'] },
      { query: 'exceed hotel limit approval', hits: ['expense-faq-07'] },
    ],
    ingested: [
      {
        id: 'travel-policy-2025-s4',
        text: 'Travel Policy 2025, Section 4.2: the nightly hotel limit for Tier 1 cities is EUR 220 (London, Paris, New York, Tokyo, Zurich, San Francisco, Singapore), breakfast included where offered.',
      },
      { id: 'travel-policy-2025-changes', text: 'Changes in 2025: higher Tier 1 hotel limit, Singapore added to Tier 1, meal allowance unchanged.' },
    ],
    ingestEvent: '[ingestion] 2 new documents added to "hr-policies": Travel Policy 2025.pdf (sections 4, changes)',
    answer: 'London is a Tier 1 city: EUR 180 per night including taxes (2023 policy); breakfast in the room rate is not reimbursed separately.',
  },
  {
    collection: 'payments-api-docs',
    question: 'If our webhook endpoint times out, how often does the provider retry, and how do we avoid processing an event twice?',
    passages: [
      {
        id: 'webhooks-retries-01',
        text: 'If your endpoint does not respond with a 2xx within 10 seconds, the event is retried with exponential backoff for up to 3 days in live mode.',
      },
      { id: 'webhooks-retries-02', text: 'Events may be delivered more than once. Make your handler idempotent by recording processed event ids.' },
      {
        id: 'webhooks-signatures-01',
        text: 'Each webhook includes a signature header computed with your endpoint secret; verify it before trusting the payload.',
      },
      { id: 'idempotency-keys-01', text: 'Idempotency keys on API requests let you safely retry POST requests; keys expire after 24 hours.' },
      { id: 'webhooks-ordering-01', text: 'Webhook delivery order is not guaranteed; use the created timestamp or fetch the object to get its current state.' },
      { id: 'webhooks-best-practices-03', text: 'Return a 2xx quickly and process events asynchronously in a queue to avoid timeouts.' },
      { id: 'webhooks-testing-01', text: 'Use the CLI to forward events to a local endpoint during development.' },
    ],
    paraphrases: [
      'webhook retry timeout',
      'webhook retries after timeout',
      'how are webhooks retried on timeout',
      'webhook timeout retry policy',
      'retry webhook when endpoint times out',
    ],
    fixationHits: ['webhooks-retries-01', 'webhooks-testing-01', 'webhooks-signatures-01'],
    refinements: [
      { query: 'duplicate webhook events idempotent handler', hits: ['webhooks-retries-02'] },
      { query: 'webhook processing asynchronous quick 2xx', hits: ['webhooks-best-practices-03'] },
      { query: 'webhook delivery order guarantee', hits: ['webhooks-ordering-01'] },
      { query: 'idempotency key expiry', hits: ['idempotency-keys-01'] },
    ],
    ingested: [
      {
        id: 'webhooks-retries-2024-update',
        text: 'Update 2024-05: retries now stop after 72 hours and endpoints failing for 5 consecutive days are disabled automatically with an email notice.',
      },
    ],
    ingestEvent: '[ingestion] 1 new document added to "payments-api-docs": changelog-2024-05.md',
    answer:
      'Retries use exponential backoff for up to 3 days; events can arrive more than once or out of order, so store processed event ids and answer 2xx quickly.',
  },
  {
    collection: 'redis-docs',
    question: 'Our Redis cache started evicting session keys; which eviction policy keeps sessions and drops cache entries?',
    passages: [
      {
        id: 'redis-eviction-01',
        text: 'When maxmemory is reached, Redis applies the configured maxmemory-policy. The default is noeviction: writes fail with an OOM error.',
      },
      { id: 'redis-eviction-02', text: 'volatile-lru evicts least recently used keys among those with an expire set; allkeys-lru evicts among all keys.' },
      { id: 'redis-eviction-03', text: 'If no keys have an expire set, volatile-* policies behave like noeviction.' },
      { id: 'redis-eviction-04', text: 'volatile-ttl evicts keys with the shortest remaining time to live first.' },
      { id: 'redis-memory-opt-02', text: 'Use separate logical databases or, better, separate instances for data with different eviction needs.' },
      { id: 'redis-info-memory', text: 'INFO memory reports used_memory, maxmemory and evicted_keys.' },
      { id: 'redis-lfu-01', text: 'allkeys-lfu and volatile-lfu approximate least frequently used eviction using a logarithmic counter.' },
    ],
    paraphrases: [
      'redis eviction policy sessions',
      'redis eviction policy for sessions',
      'which redis eviction policy keeps sessions',
      'redis evicting session keys policy',
      'redis eviction sessions cache',
    ],
    fixationHits: ['redis-eviction-01', 'redis-info-memory', 'redis-lfu-01'],
    refinements: [
      { query: 'evict only keys with expire set', hits: ['redis-eviction-02', 'redis-eviction-03'] },
      { query: 'evict shortest ttl first', hits: ['redis-eviction-04'] },
      { query: 'separate instances different eviction needs', hits: ['redis-memory-opt-02'] },
    ],
    ingested: [
      {
        id: 'platform-redis-standards',
        text: 'Platform standard (2024): sessions live in the dedicated redis-sessions cluster with noeviction; the shared cache uses allkeys-lfu.',
      },
    ],
    ingestEvent: '[ingestion] 1 new document added to "redis-docs": platform-redis-standards.md',
    answer:
      'Give cache entries a TTL and use volatile-lru (sessions without expire are then never evicted), or better, move sessions to their own instance with noeviction.',
  },
  {
    collection: 'router-support-kb',
    question: 'Customers report their Wi-Fi drops every night at 03:00 on the AX3000 router. What causes it?',
    passages: [
      { id: 'kb-ax3000-auto-update', text: 'AX3000 firmware 2.1+ checks for updates daily at 03:00 local time and reboots if an update is installed.' },
      {
        id: 'kb-ax3000-scheduled-reboot',
        text: 'Scheduled reboot (Advanced > System > Reboot Schedule) is off by default; some ISP-provisioned units enable it at 03:00.',
      },
      {
        id: 'kb-ax3000-dfs',
        text: 'On 5 GHz DFS channels the router must vacate the channel when radar is detected; clients disconnect for up to 60 seconds.',
      },
      { id: 'kb-ax3000-leds', text: 'LED meanings: solid white = online, blinking amber = updating firmware, solid amber = no internet.' },
      {
        id: 'kb-general-wifi-drops',
        text: 'Intermittent Wi-Fi drops are often caused by interference, outdated firmware or power-saving settings on the client.',
      },
      { id: 'kb-ax3000-logs', text: 'System logs (Advanced > System > Logs) show reboots, firmware checks and DFS events with timestamps.' },
      { id: 'kb-ax3000-band-steering', text: 'Smart Connect steers clients between 2.4 and 5 GHz; disabling it can help with older devices.' },
    ],
    paraphrases: [
      'wifi drops at night ax3000',
      'AX3000 wifi drops every night',
      'wifi disconnects every night AX3000 router',
      'ax3000 wifi dropping at night',
      'AX3000 nightly wifi drop',
      'wi-fi drops at 3am ax3000',
    ],
    fixationHits: ['kb-general-wifi-drops', 'kb-ax3000-band-steering', 'kb-ax3000-leds'],
    refinements: [
      { query: 'AX3000 automatic firmware update time reboot', hits: ['kb-ax3000-auto-update'] },
      { query: 'AX3000 reboot schedule ISP provisioned', hits: ['kb-ax3000-scheduled-reboot'] },
      { query: 'AX3000 system log reboot timestamps', hits: ['kb-ax3000-logs'] },
      { query: 'DFS radar 5GHz disconnect', hits: ['kb-ax3000-dfs'] },
    ],
    ingested: [
      {
        id: 'kb-ax3000-known-issue-2-3-1',
        text: 'Known issue (firmware 2.3.1): the nightly update check reboots the router even when no update is available. Fixed in 2.3.2.',
      },
    ],
    ingestEvent: '[ingestion] 1 new document added to "router-support-kb": known-issues-2.3.1.md',
    answer: 'The 03:00 timing matches the daily firmware check (which reboots after an update) or an ISP-enabled reboot schedule; the logs confirm which.',
  },
];

/** A retrieval result line as a retriever renders it: id, score, text. */
export function renderHit(p: Passage, score: number): string {
  return `[${p.id}] (score ${score.toFixed(2)}) ${p.text}`;
}
