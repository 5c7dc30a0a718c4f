-- wrk script for scripts/bench-api-writes: PUT /v1/registrations/{id} with a localized
-- template, cycling through ids issued by POST /v1/registrationIDs (ids.txt), one
-- authorization header for all requests (AUTH env var).
local ids = {}
local threads = {}
local counter = 0

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  for line in io.lines(os.getenv("IDS_FILE")) do ids[#ids + 1] = line end
  counter = id * 1000003
  wrk.headers["Authorization"] = os.getenv("AUTH")
  wrk.headers["Content-Type"] = "application/json"
end

local categories = {"World", "Politics", "Business", "Technology", "Science", "Sports"}
local languages = {"English", "French", "Mandarin"}

function request()
  counter = counter + 1
  local rid = ids[(counter % #ids) + 1]
  local lang = languages[(counter % 3) + 1]
  local body = string.format(
    '{"platform":"apns","handle":"%064x","tags":["%s","%s"],"template":{"name":"newsTemplate","body":"{\\"aps\\":{\\"alert\\":\\"$(News_%s)\\"}}"}}',
    counter, categories[(counter % 6) + 1], categories[((counter + 3) % 6) + 1], lang)
  return wrk.format("PUT", "/v1/registrations/" .. rid, nil, body)
end

function done(summary, latency, requests)
  io.write(string.format("requests %d, errors %d (status %d), %.0f requests/s, latency p50 %.1f ms p99 %.1f ms\n",
    summary.requests, summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
