-- wrk script of benches/load.sh: POSTs one JSON-RPC body over keep-alive
-- connections, optionally several requests per write (HTTP/1.1 pipelining).
--
-- Environment:
--   LOAD_BODY      the request body (required)
--   LOAD_PIPELINE  requests per write on each connection (default 1: one request,
--                  wait for its response, send the next)
--   LOAD_EXPECT    if set: every response must be status 200 with exactly this body;
--                  counts the ones that are not (slower: wrk keeps every body)
--
-- At the end it prints one machine-readable line:
--   RESULT requests=N seconds=S p50_us=X p99_us=Y errors=E bad=B
-- where errors adds up wrk's connect/read/write/timeout errors and non-2xx/3xx
-- statuses, and bad counts responses that did not match LOAD_EXPECT.

local body = os.getenv("LOAD_BODY") or error("LOAD_BODY is not set")
local depth = tonumber(os.getenv("LOAD_PIPELINE") or "1")
local expect = os.getenv("LOAD_EXPECT")

wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"

local threads = {}

function setup(thread)
   table.insert(threads, thread)
end

if depth > 1 then
   local req
   function init(args)
      req = string.rep(wrk.format(), depth)
   end
   -- A constant string, but defining `request` makes wrk call it for every
   -- write (one call per `depth` requests) and count the requests it holds.
   function request()
      return req
   end
end

if expect then
   bad = 0
   function response(status, headers, got)
      if status ~= 200 or got ~= expect then
         if bad == 0 then
            io.stderr:write(string.format("unexpected response: %d %s\n", status, got))
         end
         bad = bad + 1
      end
   end
end

function done(summary, latency, requests)
   local bad_total = 0
   for _, t in ipairs(threads) do
      bad_total = bad_total + (t:get("bad") or 0)
   end
   local e = summary.errors
   local errors = e.connect + e.read + e.write + e.status + e.timeout
   io.write(string.format("RESULT requests=%d seconds=%.4f p50_us=%d p99_us=%d errors=%d bad=%d\n",
      summary.requests, summary.duration / 1e6, latency:percentile(50), latency:percentile(99),
      errors, bad_total))
end
