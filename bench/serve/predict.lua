-- SPDX-License-Identifier: Apache-2.0
-- wrk script: POSTs one :predict request body (read from KILN_BENCH_BODY) on every request and
-- counts non-2xx answers.
local f = assert(io.open(os.getenv("KILN_BENCH_BODY"), "r"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
wrk.path = os.getenv("KILN_BENCH_PATH") or "/v1/models/mlp:predict"

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  bad = 0
end

function response(status, headers, body)
  if status < 200 or status > 299 then
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local non2xx = 0
  for _, t in ipairs(threads) do
    non2xx = non2xx + t:get("bad")
  end
  io.write(string.format("KILN requests=%d non2xx=%d errors=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d rps=%.1f\n",
    summary.requests, non2xx,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    summary.requests / (summary.duration / 1e6)))
end
