/*
 * The Lua scripts of RedisBreakerStore: each runs atomically on the server,
 * so that any number of writers append to one session's log without a
 * conflict, and a reply brings a writer what others appended.
 */
import { createHash } from 'node:crypto';

/**
 * Most operations a session's log holds. Writers fold it long before this
 * (by 4 × COMPACT_EVERY of session-fold.ts at the latest); only a session no writer can
 * fold reaches it (a snapshot or operation of a newer version), and then
 * appends are refused instead of the log growing for as long as the session
 * is used.
 */
export const MAX_LOGGED = 1024;
/** What APPEND answers when the log is full (a Redis error reply). */
export const LOG_FULL = 'GOVERNOR_LOG_FULL';
/** What APPEND answers when it reaches the server after its writer stopped waiting for it (a Redis error reply). */
const TOO_LATE = 'GOVERNOR_TOO_LATE';

/**
 * Lua: how far incarnation `id` of a session (its log ending at `last`, `anc`
 * what it took over) holds incarnation `cid`: up to that position, -1 when
 * not at all (see the session layout below).
 */
const REACH = `
local function reach(anc, id, last, cid)
  if cid == id then return last end
  local best = -1
  for i, p in string.gmatch(anc or '', '(%S+) (%d+)') do
    if i == cid and tonumber(p) > best then best = tonumber(p) end
  end
  return best
end
`;

/*
 * A session is a hash {base, id, snap, anc, at} and a list (its log). `snap` is the
 * state after operation `base` (absent while base is 0: the fresh state); the
 * list holds operations base+1 .. end, oldest first, so `end` is base plus
 * the list's length and appending takes the next position atomically: any
 * number of writers interleave without conflict, and every replica folds the
 * same operations in the same order through the same pure logic.
 *
 * `id` names the session's incarnation: the one a writer created, or the
 * one a process wrote back after the server forgot it (see RESTORE, MERGE).
 * A different one than a process knows tells it that the session it knew
 * was forgotten. Whether the new one holds all the process knew is told by
 * `anc`, which an incarnation gets when it begins (at position `at`) and
 * keeps: the incarnations it took over, each with how far ("<id> <position>
 * …"). A process that knew incarnation i up to position p knows less than
 * (or as much as) a session that is i up to p or later, or whose `anc` names
 * i at p or later: it then folds the session as the server holds it. Else it
 * knows something the session lacks, and writes back what it knows with the
 * session's operations since it began folded in. So a copy that is behind
 * never replaces one that knows more, whichever replica writes first after a
 * restart. A session created by a writer that knew none has no `anc` and
 * `at` 0, as do those of earlier versions.
 *
 * Replies of APPEND and READ: {end, base, from, ops, snap, id, time, kin,
 * anc, at}: `ops` are the operations after position `from` and before the
 * caller's own (APPEND) or up to `end` (READ); `from` is the caller's known
 * position when it is still in the log, else `base` (then `snap` is the
 * state to start from, nil = fresh). `kin` says how the session stands to
 * what the caller knows: 0 it is the caller's incarnation (or the caller
 * knew none), 1 another that holds all the caller knew, 2 one that lacks
 * some of it; for either of those the tail starts from the snapshot (except
 * for the caller's own incarnation that lost operations it knew: it holds
 * nothing new to the caller). APPEND answers just {end, base, time} when
 * there is nothing else to tell: the caller's position is the one before
 * its own and the id is the one it knows. `time` is the server's (epoch
 * ms; for READ only when asked).
 */
const FOLD_REPLY = `
local function tail(base, last, known)
  if known >= base and known <= last then
    if last > known then return {known, redis.call('LRANGE', KEYS[2], known - base, last - base - 1), false} end
    return {known, {}, false}
  end
  local snap = false
  if base > 0 then snap = redis.call('HGET', KEYS[1], 'snap') end
  local ops = {}
  if last > base then ops = redis.call('LRANGE', KEYS[2], 0, last - base - 1) end
  return {base, ops, snap}
end
${REACH}
local function kin(id, anc, last, cid, known)
  if cid == '' then return 0, known end
  if cid == id then
    if known <= last then return 0, known end
    return 2, last
  end
  if reach(anc, id, last, cid) >= known then return 1, -1 end
  return 2, -1
end
`;

/**
 * KEYS[1] session hash, KEYS[2] its log; ARGV: known position (-1 = none),
 * the operation (see encodeOp), ttl ms, '1' to refresh both keys' expiry, the id the caller
 * knows ('' = none), an id for the session should this create it, the
 * deadline (server time, epoch ms; '' = none) after which the caller no
 * longer waits for the reply, and optionally a snapshot to store first: its
 * position and encoded state (see COMPACT), so that folding costs no round
 * trip; it is stored only in the incarnation it was folded from. An append that runs after its deadline changes nothing: the reply is
 * the error TOO_LATE (its caller was told that it failed, and let the call
 * through or refused it unjudged). A log that holds MAX_LOGGED operations
 * takes no more: the reply is the error LOG_FULL. Every reply ends with the
 * server's time (epoch ms). Three server commands in the common case (TIME,
 * HMGET, RPUSH): the expiry is set when a key is created and refreshed only
 * when the caller asks (see RedisBreakerStore's ttlMs).
 */
const APPEND = `${FOLD_REPLY}
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local deadline = tonumber(ARGV[7])
if deadline and now > deadline then
  return redis.error_reply('${TOO_LATE} the append reached the server ' .. (now - deadline) .. ' ms past its deadline (its writer no longer waits for it)')
end
local meta = redis.call('HMGET', KEYS[1], 'base', 'id', 'anc', 'at')
local base = tonumber(meta[1]) or 0
local id = meta[2]
local refresh = ARGV[4] == '1'
if not id then
  -- A new session (or one that expired): nothing of an older log may be folded into it. HSET first: a full Redis
  -- (noeviction) refuses it, ending the script before it writes anything, where DEL, which frees memory, is let through
  -- and would let the writes after it through too.
  id = ARGV[6]
  base = 0
  redis.call('HSET', KEYS[1], 'id', id)
  redis.call('DEL', KEYS[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
local snapAt = tonumber(ARGV[8])
if snapAt and snapAt > base and id == ARGV[5] then
  local kept = redis.call('LLEN', KEYS[2])
  if snapAt <= base + kept then
    redis.call('LTRIM', KEYS[2], snapAt - base, -1)
    redis.call('HSET', KEYS[1], 'base', snapAt, 'snap', ARGV[9])
    base = snapAt
  end
end
local n = redis.call('RPUSH', KEYS[2], ARGV[2])
if n > ${MAX_LOGGED} then
  redis.call('RPOP', KEYS[2])
  return redis.error_reply('${LOG_FULL} ' .. (n - 1))
end
if refresh then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
elseif n == 1 then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
local pos = base + n
local known = tonumber(ARGV[1])
if known == pos - 1 and id == ARGV[5] then return {pos, base, now} end
local anc, at = meta[3] or '', tonumber(meta[4]) or 0
if id ~= meta[2] then anc, at = '', 0 end
local k, start = kin(id, anc, pos - 1, ARGV[5], known)
local t = tail(base, pos - 1, start)
return {pos, base, t[1], t[2], t[3], id, now, k, anc, at}
`;

/**
 * KEYS[1] session hash, KEYS[2] its log; ARGV: known position (-1 = none), the id the caller knows ('' = none),
 * and '1' when the caller does not know the server's clock yet: then the reply's time is the server's.
 */
const READ = `${FOLD_REPLY}
local now = false
if ARGV[3] == '1' then
  local clock = redis.call('TIME')
  now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
end
local meta = redis.call('HMGET', KEYS[1], 'base', 'id', 'anc', 'at')
if not meta[2] then return {0, 0, 0, {}, false, false, now, 0, '', 0} end
local base = tonumber(meta[1]) or 0
local last = base + redis.call('LLEN', KEYS[2])
local anc = meta[3] or ''
local k, start = kin(meta[2], anc, last, ARGV[2], tonumber(ARGV[1]))
local t = tail(base, last, start)
return {last, base, t[1], t[2], t[3], meta[2], now, k, anc, tonumber(meta[4]) or 0}
`;

/**
 * KEYS[1] session hash, KEYS[2] its log; ARGV: position, encoded state after
 * it, the incarnation it was folded from. Makes the state the snapshot and
 * drops the operations it includes, unless a later snapshot is there already
 * (or the position is not in the log, or the session is another incarnation by now).
 */
const COMPACT = `
local meta = redis.call('HMGET', KEYS[1], 'base', 'id')
if meta[2] ~= ARGV[3] then return 0 end
local base = tonumber(meta[1]) or 0
local last = base + redis.call('LLEN', KEYS[2])
local pos = tonumber(ARGV[1])
if pos <= base or pos > last then return 0 end
redis.call('LTRIM', KEYS[2], pos - base, -1)
redis.call('HSET', KEYS[1], 'base', pos, 'snap', ARGV[2])
return 1
`;

/**
 * KEYS[1] session hash, KEYS[2] open sessions (a sorted set scored by the end
 * of each one's cooldown); ARGV: position, the end of the cooldown if open
 * after it ('' if not), session id, ttl ms. The latest position's word wins,
 * whatever the order the writers' marks arrive in.
 */
const MARK_OPEN = `
local at = tonumber(redis.call('HGET', KEYS[1], 'openpos') or '0')
local pos = tonumber(ARGV[1])
if pos < at then return 0 end
redis.call('HSET', KEYS[1], 'openpos', pos)
if ARGV[2] ~= '' then
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
else
  redis.call('ZREM', KEYS[2], ARGV[3])
end
return 1
`;

/**
 * KEYS[1] open sessions; ARGV[1] session key prefix, ARGV[2] now (ms). Drops
 * the sessions whose cooldown has ended or that expired, returns the rest.
 */
const LIST_OPEN = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
local open = {}
for _, id in ipairs(ids) do
  if redis.call('EXISTS', ARGV[1] .. id) == 1 then
    table.insert(open, id)
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return open
`;

/** KEYS[1] steer list; ARGV[1] ttl ms, ARGV[2] most kept, ARGV[3…] messages. */
const ADD_STEERS = `
for i = 3, #ARGV do
  redis.call('RPUSH', KEYS[1], ARGV[i])
end
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`;

/** KEYS[1] steer list. Returns and removes every message at once, so two replicas never both deliver one. */
const TAKE_STEERS = `
local messages = redis.call('LRANGE', KEYS[1], 0, -1)
redis.call('DEL', KEYS[1])
return messages
`;

/**
 * KEYS[1] seen list; ARGV[1] ttl ms, ARGV[2] most kept, ARGV[3…] key hashes.
 * Returns 1 for each hash not in the list (then added), 0 for one already
 * there; the list keeps the newest, and every hash of this call.
 */
const CLAIM_FIRST = `
local seen = {}
for _, h in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do seen[h] = true end
local out = {}
for i = 3, #ARGV do
  if seen[ARGV[i]] then
    out[i - 2] = 0
  else
    out[i - 2] = 1
    seen[ARGV[i]] = true
    redis.call('RPUSH', KEYS[1], ARGV[i])
  end
end
redis.call('LTRIM', KEYS[1], -math.max(tonumber(ARGV[2]), #ARGV - 2), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return out
`;

/**
 * KEYS[1] alias key, KEYS[2] the session's alias list; ARGV: session id,
 * expiry ms, most kept. Points the alias at the session; the session keeps
 * its newest aliases, older ones are dropped.
 */
const ADD_ALIAS = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('LREM', KEYS[2], 0, KEYS[1])
redis.call('RPUSH', KEYS[2], KEYS[1])
while redis.call('LLEN', KEYS[2]) > tonumber(ARGV[3]) do
  redis.call('DEL', redis.call('LPOP', KEYS[2]))
end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
`;

/** KEYS[1] session hash, KEYS[2] its log, KEYS[3] open sessions, KEYS[4] its steer list, KEYS[5] its seen list, KEYS[6] its alias list, KEYS[7] its notes; ARGV[1] session id. */
const DELETE = `
for _, alias in ipairs(redis.call('LRANGE', KEYS[6], 0, -1)) do redis.call('DEL', alias) end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[4], KEYS[5], KEYS[6], KEYS[7])
redis.call('ZREM', KEYS[3], ARGV[1])
return 1
`;

/**
 * Lua for RESTORE and MERGE. KEYS[1] session hash, KEYS[2] its log, KEYS[3]
 * open sessions; ARGV: an id for the new incarnation, the position its
 * snapshot is after, the encoded state, expiry ms, the end of its cooldown
 * if open ('' if not), session id, ttl ms of the open set. Begins the
 * incarnation with that snapshot and ancestry, and lists the session as open
 * or not as the state is, unless (`ordered`) a mark of a later position of
 * the same incarnation is there already (see MARK_OPEN).
 */
const REINCARNATE = `
local function reincarnate(pos, anc, ordered)
  redis.call('HSET', KEYS[1], 'id', ARGV[1], 'base', pos, 'snap', ARGV[3], 'anc', anc, 'at', pos)
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
  if ordered and pos < tonumber(redis.call('HGET', KEYS[1], 'openpos') or '0') then return end
  redis.call('HSET', KEYS[1], 'openpos', pos)
  if ARGV[5] ~= '' then
    redis.call('ZADD', KEYS[3], ARGV[5], ARGV[6])
    redis.call('PEXPIRE', KEYS[3], ARGV[7])
  else
    redis.call('ZREM', KEYS[3], ARGV[6])
  end
end
`;

/**
 * Writes back a session the server forgot, as a process holds it: a new
 * incarnation whose snapshot is that state, at the position the process
 * knows, with an empty log (see REINCARNATE for KEYS and ARGV[1..7]; ARGV[8]
 * all the process knew, in `anc` form, the incarnation it knew included).
 * A session that is there is replaced only when the process knows all it
 * holds (another copy written back by a process that knew less, and not
 * written to since): a write-back never replaces more knowledge with less,
 * whoever comes first. Replies 1 when written, else {end, id, kin}: kin 1
 * when the session holds all the process knew, 2 when each holds something
 * the other lacks (the process folds them together, see MERGE).
 */
const RESTORE = `${REACH}${REINCARNATE}
local meta = redis.call('HMGET', KEYS[1], 'base', 'id', 'anc', 'at')
local pos = tonumber(ARGV[2])
if meta[2] then
  local last = (tonumber(meta[1]) or 0) + redis.call('LLEN', KEYS[2])
  local covered = true
  for i, p in string.gmatch(ARGV[8], '(%S+) (%d+)') do
    if reach(meta[3], meta[2], last, i) < tonumber(p) then covered = false end
  end
  if covered then return {last, meta[2], 1} end
  local held = {}
  for i, p in string.gmatch(meta[3] or '', '(%S+) (%d+)') do table.insert(held, {i, tonumber(p)}) end
  if last > (tonumber(meta[4]) or 0) then table.insert(held, {meta[2], last}) end
  for _, e in ipairs(held) do
    if reach(ARGV[8], '', -1, e[1]) < e[2] then return {last, meta[2], 2} end
  end
end
redis.call('DEL', KEYS[2])
reincarnate(pos, ARGV[8], false)
return 1
`;

/**
 * Writes back what a process knows that the session lacks: the state it
 * folded from what it knew and the session's operations, up to the end of
 * incarnation ARGV[8] at that position, as a new incarnation whose snapshot
 * is that state and whose ancestry is all the process knew (ARGV[9]) and
 * ARGV[8] up to that position (see REINCARNATE for the rest). Replies 0 and
 * changes nothing when the session is another incarnation by now, or took
 * an operation more: the process then folds that in and tries again.
 */
const MERGE = `${REINCARNATE}
local meta = redis.call('HMGET', KEYS[1], 'base', 'id')
if meta[2] ~= ARGV[8] then return 0 end
local pos = tonumber(ARGV[2])
if (tonumber(meta[1]) or 0) + redis.call('LLEN', KEYS[2]) ~= pos then return 0 end
redis.call('DEL', KEYS[2])
local anc = ARGV[9]
if anc ~= '' then anc = anc .. ' ' end
reincarnate(pos, anc .. ARGV[8] .. ' ' .. pos, true)
return 1
`;

/**
 * KEYS[1] a key of the store's own. A write that keeps nothing, refused as
 * the store's writes would be: by a full server that may not evict (OOM), a
 * read-only replica (READONLY), a server that cannot persist (MISCONF).
 */
const WRITE_PROBE = `
redis.call('SET', KEYS[1], '1', 'PX', 1000)
redis.call('DEL', KEYS[1])
return 1
`;

/** KEYS[1] the session's notes; ARGV: name, value, expiry ms. */
const PUT_NOTE = `
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

export interface Script {
  readonly source: string;
  readonly sha1: string;
}

function script(source: string): Script {
  return { source, sha1: createHash('sha1').update(source).digest('hex') };
}

export const SCRIPTS = {
  append: script(APPEND),
  read: script(READ),
  compact: script(COMPACT),
  markOpen: script(MARK_OPEN),
  listOpen: script(LIST_OPEN),
  delete: script(DELETE),
  addSteers: script(ADD_STEERS),
  takeSteers: script(TAKE_STEERS),
  claimFirst: script(CLAIM_FIRST),
  addAlias: script(ADD_ALIAS),
  putNote: script(PUT_NOTE),
  restore: script(RESTORE),
  merge: script(MERGE),
  writeProbe: script(WRITE_PROBE),
};
