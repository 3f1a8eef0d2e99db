-- wrk script of bench/lucene_http.sh: replays the requests of one class of a scry workload
-- file (CLASS<TAB>METHOD<TAB>PATH<TAB>BODY lines; environment WL = file, CLASS = class), each
-- wrk thread cycling through them from its own offset, and prints one JSON line at the end:
-- requests, duration_us, p50_us, p99_us, errors (socket errors + non-2xx responses).
local threads = {}
local counter = 0

function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

function init(args)
  reqs = {}
  local cls = os.getenv("CLASS")
  for line in io.lines(os.getenv("WL")) do
    local c, m, p, b = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$")
    if c == cls then
      table.insert(reqs, wrk.format(m, p, {["Content-Type"] = "application/json"}, b))
    end
  end
  if #reqs == 0 then
    io.stderr:write("lucene_http.lua: no requests of class " .. tostring(cls) .. "\n")
    os.exit(2)
  end
  idx = (tid * 7919) % #reqs
end

function request()
  idx = idx % #reqs + 1
  return reqs[idx]
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"errors":%d,"non2xx":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, e.status))
end
