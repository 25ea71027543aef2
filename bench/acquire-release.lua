-- SPDX-License-Identifier: MIT
-- wrk script for tenured: durable acquire -> release cycles on unique names.
--   wrk -c50 -t2 -d10s -s bench/acquire-release.lua URL -- [cycle|acquire] [nonce]
-- cycle (default): every 201 queues a release (DELETE with the returned
--   token and lease_secret); a connection sends a queued release if there is
--   one, else a new acquire, so about half of the requests are each kind.
-- acquire: only acquires, each on a new name with ttl 10 s (the same work as
--   Redis "SET key val NX PX 10000" on random keys).
-- Every name is unique per thread and iteration; nothing waits or retries.

local threads = {}
local next_id = 0

function setup(thread)
   next_id = next_id + 1
   thread:set("id", next_id)
   table.insert(threads, thread)
end

mode = "cycle" -- global, so that done() can read it from a thread
local nonce = "0"
local counter = 0
local pending = {}
ok, held, other, acquires, releases = 0, 0, 0, 0, 0
-- Requests are built by bench/json_req.lua, found from this script's path.
local json_req = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./")
   .. "json_req.lua")

function init(args)
   if args[1] ~= nil then mode = args[1] end
   if args[2] ~= nil then nonce = args[2] end
end

function request()
   local n = #pending
   if mode == "cycle" and n > 0 then
      local p = pending[n]
      pending[n] = nil
      releases = releases + 1
      return json_req("DELETE", "/v1/leases/" .. p[1],
         '{"token":' .. p[2] .. ',"lease_secret":"' .. p[3] .. '"}')
   end
   counter = counter + 1
   acquires = acquires + 1
   local name = "b" .. nonce .. "-" .. id .. "-" .. counter
   return json_req("POST", "/v1/leases",
      '{"name":"' .. name .. '","owner_id":"bench","ttl_ms":10000}')
end

function response(status, hdrs, body)
   if status == 201 then
      ok = ok + 1
      if mode == "cycle" then
         local name = body:match('"name"%s*:%s*"([^"]*)"')
         local token = body:match('"token"%s*:%s*(%d+)')
         local secret = body:match('"lease_secret"%s*:%s*"(%x+)"')
         if name and token and secret then
            pending[#pending + 1] = { name, token, secret }
         end
      end
   elseif status == 204 then
      ok = ok + 1
   elseif status == 409 then
      held = held + 1
   else
      other = other + 1
   end
end

function done(summary, latency, requests)
   local t = { ok = 0, held = 0, other = 0, acquires = 0, releases = 0 }
   for _, th in ipairs(threads) do
      for k, _ in pairs(t) do t[k] = t[k] + (th:get(k) or 0) end
   end
   local m = threads[1] and threads[1]:get("mode") or mode
   io.write(string.format("lua: mode=%s acquires=%d releases=%d ok=%d held=%d other=%d\n",
      m, t.acquires, t.releases, t.ok, t.held, t.other))
end
