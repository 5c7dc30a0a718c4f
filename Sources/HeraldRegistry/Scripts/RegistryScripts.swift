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
    /// Lua shared by the scripts that change views: `pack_of(id)` is `SlotLayout.pack(of:)`
    /// as the field name; `pack_put(key, id, view)` replaces the entry of `id` in its pack of
    /// the `packs` hash `key` (a `ViewPack`), or removes it when `view` is nil, and removes
    /// the pack field when it becomes empty.
    static let packFunctions = #"""
        local function pack_of(id)
          local h = 5381
          for i = 1, #id do h = (h * 33 + string.byte(id, i)) % 2147483647 end
          return string.format('%d', h % 256)
        end
        local function pack_put(key, id, view)
          local field = pack_of(id)
          local pack = redis.call('HGET', key, field) or ''
          local pos, n, len = 1, #pack, #id
          while pos <= n do
            local il, vl = struct.unpack('>I4I4', pack, pos)
            local stop = pos + 8 + il + vl
            if il == len and string.sub(pack, pos + 8, pos + 7 + il) == id then
              pack = string.sub(pack, 1, pos - 1) .. string.sub(pack, stop)
              break
            end
            pos = stop
          end
          if view then pack = pack .. struct.pack('>I4I4', len, #view) .. id .. view end
          if pack == '' then
            redis.call('HDEL', key, field)
          else
            redis.call('HSET', key, field, pack)
          end
        end
        """#

    /// `apply`: KEYS[1] slot prefix; ARGV: id, version, doc (empty = delete), view, handle,
    /// expiresAt (epoch seconds or empty), now (epoch seconds), tag count, tags...
    /// Returns 1 when applied, 0 when ignored (an older or replayed change).
    public static let apply = RedisScript(
        packFunctions + "\n" + #"""
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
                if type(decoded.handle) == 'string' then oldHandle = decoded.handle end
              end
            end
            local live = doc ~= '' and (expiresAt == '' or tonumber(expiresAt) > tonumber(ARGV[7]))
            local newTags = {}
            if live then
              for i = 1, tonumber(ARGV[8]) do newTags[ARGV[8 + i]] = true end
            end
            for t in pairs(oldTags) do
              if not newTags[t] then redis.call('SREM', p .. 'tag:' .. t, id) end
            end
            if oldHandle and (not live or oldHandle ~= handle) then
              redis.call('SREM', p .. 'handle:' .. oldHandle, id)
            end
            if live then
              redis.call('SET', docKey, doc)
              pack_put(p .. 'packs', id, ARGV[4])
              redis.call('SADD', p .. 'all', id)
              for t in pairs(newTags) do
                if not oldTags[t] then redis.call('SADD', p .. 'tag:' .. t, id) end
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
              pack_put(p .. 'packs', id, nil)
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
        packFunctions + "\n" + #"""
            local p = KEYS[1]
            local ids = redis.call('ZRANGEBYSCORE', p .. 'exp', '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
            for _, id in ipairs(ids) do
              local docKey = p .. 'doc:' .. id
              local old = redis.call('GET', docKey)
              if old then
                local ok, decoded = pcall(cjson.decode, old)
                if ok and type(decoded) == 'table' then
                  if type(decoded.tags) == 'table' then
                    for _, t in ipairs(decoded.tags) do redis.call('SREM', p .. 'tag:' .. t, id) end
                  end
                  if type(decoded.timeZone) == 'string' then
                    redis.call('SREM', p .. 'tag:$TimeZone:{' .. decoded.timeZone .. '}', id)
                    redis.call('SREM', p .. 'tag:$TimeZone:{any}', id)
                  end
                  if type(decoded.handle) == 'string' then redis.call('SREM', p .. 'handle:' .. decoded.handle, id) end
                end
              end
              redis.call('DEL', docKey)
              pack_put(p .. 'packs', id, nil)
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
    public static let all: [RedisScript] = [apply, reserve, applyInstallation, expire, release]
}
