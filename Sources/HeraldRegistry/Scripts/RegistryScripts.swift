import HeraldRedis

/// The Lua scripts that change the registration index. Each runs on one slot (`KEYS[1]` is the
/// slot prefix `herald:{s}:`, which carries the hash tag), so it is atomic and Redis Cluster
/// routes it to the node owning the slot. `KEYS[2]`, the guard `herald:{s}:~`, is never used
/// by the script: it only makes Redis Cluster hold the script back (`TRYAGAIN`) while the slot
/// is being migrated (`RegistrationIndex.script`). docs/redis-layout.md is the specification.
///
/// Versions travel as decimal strings and are compared with `tonumber`: they are at most
/// microseconds since 1970 (about 2^51), exact in Lua's doubles. The stored `ver` field is
/// the argument string itself, never a number re-formatted by Lua.
public enum RegistryScripts {
    /// Lua shared by the scripts that change views (`p` is the slot prefix):
    /// - `group_of(p, tags)`: the group of a registration with `tags` (a list) arriving now:
    ///   the first 16 hex digits of the SHA-1 of those of its tags that have a bitmap in the
    ///   slot, sorted and joined with NUL; `SlotLayout.mixedGroup` when none has one. Also
    ///   returns which of the tags have a bitmap, for its `tag_add`s;
    /// - `take_position(p, id, group)`: a position for a registration that has none: the
    ///   lowest open one in a pack of its group, else the first of a new pack for the group (a
    ///   spare pack first, else the next after every pack), recorded in `pos` and `live`. A
    ///   group that would be one too many for the slot (`SlotLayout.groupsMinimum`,
    ///   `registrationsPerGroup`) takes the mixed group instead;
    /// - `free_position(p, id, at)`: gives it back when the registration leaves the slot: open
    ///   again in its group, or the whole pack spare once no registration holds it;
    /// - `pack_put(p, at, id, view)`: replaces the entry at position `at` in its pack (a
    ///   `ViewPack`), or removes it when `view` is nil, and removes the pack field when empty;
    /// - `tag_add(p, tag, id, at, mapped)` / `tag_remove(p, tag, id, at)`: the tag's set, and
    ///   its bitmap: made from the set when the set reaches `SlotLayout.bitmapThreshold`
    ///   members, kept exact while it exists, removed once the set falls below half of that.
    ///   `mapped`, when given, is `group_of`'s answer to whether the tag has a bitmap.
    static let slotFunctions = """
        local PER_PACK = \(SlotLayout.positionsPerPack)
        local PACK_BYTES = \(SlotLayout.positionsPerPack / 8)
        local BITMAP_AT = \(SlotLayout.bitmapThreshold)
        local GROUPS_MIN = \(SlotLayout.groupsMinimum)
        local PER_GROUP = \(SlotLayout.registrationsPerGroup)
        local MIXED = '\(SlotLayout.mixedGroup)'
        """ + "\n" + #"""
            local function group_of(p, tags)
              local common, mapped = {}, {}
              for _, t in ipairs(tags) do
                if redis.call('EXISTS', p .. 'bits:' .. t) == 1 then
                  common[#common + 1] = t
                  mapped[t] = true
                end
              end
              if #common == 0 then return MIXED, mapped end
              table.sort(common)
              return string.sub(redis.sha1hex(table.concat(common, '\0')), 1, 16), mapped
            end
            local function take_position(p, id, group)
              local open = p .. 'open:' .. group
              local lowest = redis.call('ZPOPMIN', open)
              local at
              if lowest[1] then
                at = tonumber(lowest[1])
              else
                if group ~= MIXED and redis.call('HEXISTS', p .. 'groups', group) == 0 then
                  local allowed = math.max(GROUPS_MIN, math.floor(redis.call('HLEN', p .. 'pos') / PER_GROUP))
                  if redis.call('HLEN', p .. 'groups') >= allowed then return take_position(p, id, MIXED) end
                end
                local pack = redis.call('RPOP', p .. 'spare')
                if pack then
                  pack = tonumber(pack)
                else
                  pack = math.floor((redis.call('STRLEN', p .. 'live') + PACK_BYTES - 1) / PACK_BYTES)
                end
                redis.call('HSET', p .. 'packgroup', pack, group)
                redis.call('HINCRBY', p .. 'groups', group, 1)
                local rest = {}
                for i = 1, PER_PACK - 1 do
                  rest[#rest + 1] = pack * PER_PACK + i
                  rest[#rest + 1] = pack * PER_PACK + i
                end
                redis.call('ZADD', open, unpack(rest))
                at = pack * PER_PACK
              end
              redis.call('HSET', p .. 'pos', id, at)
              redis.call('SETBIT', p .. 'live', at, 1)
              return at
            end
            local function free_position(p, id, at)
              redis.call('HDEL', p .. 'pos', id)
              redis.call('SETBIT', p .. 'live', at, 0)
              local pack = math.floor(at / PER_PACK)
              local group = redis.call('HGET', p .. 'packgroup', pack) or MIXED
              if redis.call('BITCOUNT', p .. 'live', pack * PACK_BYTES, pack * PACK_BYTES + PACK_BYTES - 1) > 0 then
                redis.call('ZADD', p .. 'open:' .. group, at, at)
                return
              end
              local positions = {}
              for i = 0, PER_PACK - 1 do positions[#positions + 1] = pack * PER_PACK + i end
              redis.call('ZREM', p .. 'open:' .. group, unpack(positions))
              redis.call('HDEL', p .. 'packgroup', pack)
              if redis.call('HINCRBY', p .. 'groups', group, -1) <= 0 then redis.call('HDEL', p .. 'groups', group) end
              if redis.call('HLEN', p .. 'pos') == 0 then
                redis.call('DEL', p .. 'spare', p .. 'live')
              else
                redis.call('RPUSH', p .. 'spare', pack)
              end
            end
            local function pack_put(p, at, id, view)
              local key = p .. 'packs'
              local field = string.format('%d', math.floor(at / PER_PACK))
              local pack = redis.call('HGET', key, field) or ''
              local i, n = 1, #pack
              while i <= n do
                local ep, il, vl = struct.unpack('>I4I4I4', pack, i)
                local stop = i + 12 + il + vl
                if ep == at then
                  pack = string.sub(pack, 1, i - 1) .. string.sub(pack, stop)
                  break
                end
                i = stop
              end
              if view then pack = pack .. struct.pack('>I4I4I4', at, #id, #view) .. id .. view end
              if pack == '' then
                redis.call('HDEL', key, field)
              else
                redis.call('HSET', key, field, pack)
              end
            end
            local function tag_add(p, tag, id, at, mapped)
              local set = p .. 'tag:' .. tag
              redis.call('SADD', set, id)
              local bits = p .. 'bits:' .. tag
              local has
              if mapped then has = mapped[tag] == true else has = redis.call('EXISTS', bits) == 1 end
              if has then
                redis.call('SETBIT', bits, at, 1)
              elseif redis.call('SCARD', set) >= BITMAP_AT then
                for _, member in ipairs(redis.call('SMEMBERS', set)) do
                  local position = redis.call('HGET', p .. 'pos', member)
                  if position then redis.call('SETBIT', bits, tonumber(position), 1) end
                end
              end
            end
            local function tag_remove(p, tag, id, at)
              local set = p .. 'tag:' .. tag
              redis.call('SREM', set, id)
              local bits = p .. 'bits:' .. tag
              if redis.call('EXISTS', bits) == 1 then
                if redis.call('SCARD', set) < BITMAP_AT / 2 then
                  redis.call('DEL', bits)
                elseif at then
                  redis.call('SETBIT', bits, at, 0)
                end
              end
            end
            """#

    /// `apply`: KEYS[1] slot prefix; ARGV: id, version, doc (empty = delete), view, handle,
    /// expiresAt (epoch seconds or empty), now (epoch seconds), tag count, tags...
    /// Returns 1 when applied, 0 when ignored (an older or replayed change).
    public static let apply = RedisScript(
        slotFunctions + "\n" + #"""
            local p = KEYS[1]
            local id = ARGV[1]
            local version = tonumber(ARGV[2])
            local doc = ARGV[3]
            local handle = ARGV[5]
            local expiresAt = ARGV[6]
            local current = redis.call('HGET', p .. 'ver', id)
            if current and version <= tonumber(current) then return 0 end
            local lease = redis.call('HGET', p .. 'lease', id)
            if lease and tonumber(lease) <= version then redis.call('HDEL', p .. 'lease', id) end
            local docKey = p .. 'doc:' .. id
            local at = redis.call('HGET', p .. 'pos', id)
            if at then at = tonumber(at) end
            local oldTags = {}
            local oldHandle = nil
            local old = redis.call('GET', docKey)
            if old then
              local ok, decoded = pcall(cjson.decode, old)
              if ok and type(decoded) == 'table' then
                if type(decoded.tags) == 'table' then
                  for _, t in ipairs(decoded.tags) do oldTags[t] = true end
                end
                if type(decoded.timeZone) == 'string' then
                  oldTags['$TimeZone:{' .. decoded.timeZone .. '}'] = true
                  oldTags['$TimeZone:{any}'] = true
                end
                if type(decoded.quietHours) == 'string' then
                  oldTags['$QuietHours:{' .. decoded.quietHours .. '}'] = true
                  oldTags['$QuietHours:{any}'] = true
                end
                if type(decoded.frequencyCap) == 'number' then
                  oldTags['$FrequencyCap:{' .. string.format('%d', decoded.frequencyCap) .. '}'] = true
                  oldTags['$FrequencyCap:{any}'] = true
                end
                if type(decoded.handle) == 'string' then oldHandle = decoded.handle end
              end
            end
            local live = doc ~= '' and (expiresAt == '' or tonumber(expiresAt) > tonumber(ARGV[7]))
            local newTags = {}
            if live then
              for i = 1, tonumber(ARGV[8]) do newTags[ARGV[8 + i]] = true end
            end
            for t in pairs(oldTags) do
              if not newTags[t] then tag_remove(p, t, id, at) end
            end
            if oldHandle and (not live or oldHandle ~= handle) then
              redis.call('SREM', p .. 'handle:' .. oldHandle, id)
            end
            if live then
              redis.call('SET', docKey, doc)
              local mapped = nil
              if not at then
                local list, group = {}, nil
                for t in pairs(newTags) do list[#list + 1] = t end
                group, mapped = group_of(p, list)
                at = take_position(p, id, group)
              end
              pack_put(p, at, id, ARGV[4])
              redis.call('SADD', p .. 'all', id)
              for t in pairs(newTags) do
                if not oldTags[t] then tag_add(p, t, id, at, mapped) end
              end
              if oldHandle ~= handle then redis.call('SADD', p .. 'handle:' .. handle, id) end
              if expiresAt ~= '' then
                redis.call('ZADD', p .. 'exp', expiresAt, id)
              else
                redis.call('ZREM', p .. 'exp', id)
              end
              redis.call('SREM', p .. 'gone', id)
            else
              redis.call('DEL', docKey)
              if at then
                pack_put(p, at, id, nil)
                free_position(p, id, at)
              end
              redis.call('SREM', p .. 'all', id)
              redis.call('ZREM', p .. 'exp', id)
              if doc == '' then
                redis.call('SADD', p .. 'gone', id)
              else
                redis.call('SREM', p .. 'gone', id)
              end
            end
            redis.call('HSET', p .. 'ver', id, ARGV[2])
            return 1
            """#)

    /// `addNew`: KEYS[1] slot prefix; ARGV: for each registration, id, view, tag count,
    /// tags... The bulk loader's part of adding registrations that are new to the slot (into
    /// an empty prefix): each takes a position, its view is appended to its pack (each pack
    /// read and written once per call), and it joins its tags' sets and bitmaps exactly as
    /// `apply` does. Documents, `all`, `ver` and handles are written by the loader itself.
    /// Returns the number added.
    public static let addNew = RedisScript(
        slotFunctions + "\n" + #"""
            local p = KEYS[1]
            local appended, order = {}, {}
            local i, added = 1, 0
            while i <= #ARGV do
              local id, view, tags = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
              local group, mapped = group_of(p, {unpack(ARGV, i + 3, i + 2 + tags)})
              local at = take_position(p, id, group)
              local field = string.format('%d', math.floor(at / PER_PACK))
              if not appended[field] then
                appended[field] = {}
                order[#order + 1] = field
              end
              local parts = appended[field]
              parts[#parts + 1] = struct.pack('>I4I4I4', at, #id, #view) .. id .. view
              for t = 1, tags do tag_add(p, ARGV[i + 2 + t], id, at, mapped) end
              i = i + 3 + tags
              added = added + 1
            end
            for _, field in ipairs(order) do
              local pack = redis.call('HGET', p .. 'packs', field) or ''
              redis.call('HSET', p .. 'packs', field, pack .. table.concat(appended[field]))
            end
            return added
            """#)

    /// `reserve`: KEYS[1] slot prefix; ARGV: id, expected version (empty = unconditional),
    /// nowMicros, refuseGone ("1" to fail for ids in `gone`).
    /// Returns `{status, version}`: status 0 with the reserved version; 412 with the current
    /// version when `expected` does not match; 409 with the in-flight lease when another
    /// conditional write is on its way; 410 when the id is gone and `refuseGone` is set.
    public static let reserve = RedisScript(
        #"""
        local p = KEYS[1]
        local id = ARGV[1]
        if ARGV[4] == '1' and redis.call('SISMEMBER', p .. 'gone', id) == 1 then
          return {410, 0}
        end
        local ver = tonumber(redis.call('HGET', p .. 'ver', id) or '0')
        local lease = tonumber(redis.call('HGET', p .. 'lease', id) or '0')
        if ARGV[2] ~= '' then
          if ver ~= tonumber(ARGV[2]) then return {412, ver} end
          if lease > ver then return {409, lease} end
        end
        local version = math.max(ver + 1, lease + 1, tonumber(ARGV[3]))
        local text = string.format('%d', version)
        redis.call('HSET', p .. 'lease', id, text)
        return {0, text}
        """#)

    /// `applyInstallation`: KEYS[1] slot prefix; ARGV: installation id, version, doc (empty =
    /// delete). The version and gone marker live in the slot's `ver` hash and `gone` set under
    /// `$installation:<id>` (registration ids never start with `$`). Returns 1 applied, 0 ignored.
    public static let applyInstallation = RedisScript(
        #"""
        local p = KEYS[1]
        local member = '$installation:' .. ARGV[1]
        local version = tonumber(ARGV[2])
        local current = redis.call('HGET', p .. 'ver', member)
        if current and version <= tonumber(current) then return 0 end
        local lease = redis.call('HGET', p .. 'lease', member)
        if lease and tonumber(lease) <= version then redis.call('HDEL', p .. 'lease', member) end
        local key = p .. 'inst:' .. ARGV[1]
        if ARGV[3] == '' then
          redis.call('DEL', key)
          redis.call('SADD', p .. 'gone', member)
        else
          redis.call('SET', key, ARGV[3])
          redis.call('SREM', p .. 'gone', member)
        end
        redis.call('HSET', p .. 'ver', member, ARGV[2])
        return 1
        """#)

    /// `expire`: KEYS[1] slot prefix; ARGV: now (epoch seconds), limit. Removes up to `limit`
    /// registrations whose `expiresAt` has passed from every set, keeping their `ver` entry
    /// (the record in Kafka is unchanged; a reindex drops it again because it has expired).
    /// Returns the number removed.
    public static let expire = RedisScript(
        slotFunctions + "\n" + #"""
            local p = KEYS[1]
            local ids = redis.call('ZRANGEBYSCORE', p .. 'exp', '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
            for _, id in ipairs(ids) do
              local docKey = p .. 'doc:' .. id
              local at = redis.call('HGET', p .. 'pos', id)
              if at then at = tonumber(at) end
              local old = redis.call('GET', docKey)
              if old then
                local ok, decoded = pcall(cjson.decode, old)
                if ok and type(decoded) == 'table' then
                  if type(decoded.tags) == 'table' then
                    for _, t in ipairs(decoded.tags) do tag_remove(p, t, id, at) end
                  end
                  if type(decoded.timeZone) == 'string' then
                    tag_remove(p, '$TimeZone:{' .. decoded.timeZone .. '}', id, at)
                    tag_remove(p, '$TimeZone:{any}', id, at)
                  end
                  if type(decoded.quietHours) == 'string' then
                    tag_remove(p, '$QuietHours:{' .. decoded.quietHours .. '}', id, at)
                    tag_remove(p, '$QuietHours:{any}', id, at)
                  end
                  if type(decoded.frequencyCap) == 'number' then
                    tag_remove(p, '$FrequencyCap:{' .. string.format('%d', decoded.frequencyCap) .. '}', id, at)
                    tag_remove(p, '$FrequencyCap:{any}', id, at)
                  end
                  if type(decoded.handle) == 'string' then redis.call('SREM', p .. 'handle:' .. decoded.handle, id) end
                end
              end
              redis.call('DEL', docKey)
              if at then
                pack_put(p, at, id, nil)
                free_position(p, id, at)
              end
              redis.call('SREM', p .. 'all', id)
              redis.call('ZREM', p .. 'exp', id)
            end
            return #ids
            """#)

    /// `release`: KEYS[1] slot prefix; ARGV: member, version. Drops the lease of a write that
    /// failed before Kafka had it, only if no newer reservation replaced it. Returns 1 or 0.
    public static let release = RedisScript(
        #"""
        if redis.call('HGET', KEYS[1] .. 'lease', ARGV[1]) == ARGV[2] then
          return redis.call('HDEL', KEYS[1] .. 'lease', ARGV[1])
        end
        return 0
        """#)

    /// Every script, for loading them up front (`SCRIPT LOAD`) when a process starts.
    public static let all: [RedisScript] = [apply, addNew, reserve, applyInstallation, expire, release]
}
