-- SPDX-License-Identifier: MIT
-- wrk script for scripts/pg-bench.sh: acquires on random names out of
-- 100000 (ttl 1 s), the same workload as the pgbench script it is
-- compared with.  Counts 201 / 409 / other answers.
local threads = {}
granted, held, other = 0, 0, 0
-- Requests are built by bench/json_req.lua, found from this script's path.
local json_req = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./")
   .. "../bench/json_req.lua")

function setup(thread)
   table.insert(threads, thread)
end

function init(args)
   math.randomseed(os.time() + math.floor(os.clock() * 1000000))
end

function request()
   local body = string.format('{"name":"%d","owner_id":"o%d","ttl_ms":1000}',
      math.random(1, 100000), math.random(1, 50))
   return json_req("POST", "/v1/leases", body)
end

function response(status, hdrs, body)
   if status == 201 then granted = granted + 1
   elseif status == 409 then held = held + 1
   else other = other + 1 end
end

function done(summary, latency, requests)
   local g, h, o = 0, 0, 0
   for _, t in ipairs(threads) do
      g = g + t:get("granted"); h = h + t:get("held"); o = o + t:get("other")
   end
   io.write(string.format("answers: granted=%d held=%d other=%d\n", g, h, o))
end
