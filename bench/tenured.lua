-- SPDX-License-Identifier: MIT
-- wrk script for bench/suite.sh:
--   wrk -c C -t T -d D -s bench/tenured.lua URL -- MODE DEPTH NONCE [QUOTA] [DELAY_MS]
-- MODE acquire: every request acquires a new name (ttl 60 s, or 3600 s
--   when QUOTA is set).
-- MODE cycle: acquire -> release (DELETE with token and lease_secret); a
--   release is sent whenever one is queued, so half of the requests are each.
-- MODE renew: each thread first acquires a small pool of leases (ttl 60 s),
--   then only renews them (PATCH with token and lease_secret), round robin.
-- DEPTH > 1 pipelines DEPTH requests per write on each connection (the
--   responses of one batch all arrive before the next batch is written).
-- QUOTA: acquire at most QUOTA names per thread, then only GET /healthz
--   (used to fill the server with a known number of live leases).
-- DELAY_MS: wait that long between requests of a connection (open-ish loop
--   for the latency-at-half-peak figure).
local threads = {}
local next_id = 0

function setup(thread)
   next_id = next_id + 1
   thread:set("id", next_id)
   table.insert(threads, thread)
end

mode = "acquire"
local depth = 1
local nonce = "0"
local quota = 0
local delay_ms = 0
local ttl = 60000
local counter = 0
local pending = {}
local pool = {}
local pool_target = 64
local pool_asked = 0
local rr = 0
local on_response -- defined below, installed as response() by init()
-- Requests are built by bench/json_req.lua, found from this script's path.
local json_req = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./")
   .. "json_req.lua")
ok, held, other, acquires, releases, renews, strbytes, created = 0, 0, 0, 0, 0, 0, 0, 0

function init(args)
   if args[1] ~= nil then mode = args[1] end
   if args[2] ~= nil then depth = tonumber(args[2]) end
   if args[3] ~= nil then nonce = args[3] end
   if args[4] ~= nil then quota = tonumber(args[4]) end
   if args[5] ~= nil then delay_ms = tonumber(args[5]) end
   if quota > 0 then ttl = 3600000 end
   -- wrk builds a table of the headers for every answer when a response
   -- function exists: only the modes that read answers define one (the
   -- acquire mode counts non-2xx answers through wrk's own summary, but
   -- the memory fill counts its grants)
   if mode ~= "acquire" or quota > 0 then response = on_response end
   if delay_ms > 0 then
      -- defined only for the latency runs: wrk checks after init whether
      -- a delay function exists, and a zero delay still costs a timer
      delay = function() return delay_ms end
   end
end

local function acquire()
   counter = counter + 1
   acquires = acquires + 1
   local name = "b" .. nonce .. "-" .. id .. "-" .. counter
   strbytes = strbytes + #name + 5
   return json_req("POST", "/v1/leases",
      '{"name":"' .. name .. '","owner_id":"bench","ttl_ms":' .. ttl .. '}')
end

local function one()
   if mode == "cycle" then
      local n = #pending
      if n > 0 then
         local p = pending[n]
         pending[n] = nil
         releases = releases + 1
         return json_req("DELETE", "/v1/leases/" .. p[1],
            '{"token":' .. p[2] .. ',"lease_secret":"' .. p[3] .. '"}')
      end
      return acquire()
   elseif mode == "renew" then
      if #pool == 0 or (pool_asked < pool_target) then
         pool_asked = pool_asked + 1
         return acquire()
      end
      rr = rr % #pool + 1
      local p = pool[rr]
      renews = renews + 1
      return json_req("PATCH", "/v1/leases/" .. p[1],
         '{"token":' .. p[2] .. ',"lease_secret":"' .. p[3] .. '"}')
   end
   if quota > 0 and counter >= quota then
      return wrk.format("GET", "/healthz")
   end
   return acquire()
end

function request()
   if depth <= 1 then return one() end
   local r = {}
   for i = 1, depth do r[i] = one() end
   return table.concat(r)
end


on_response = function(status, hdrs, body)
   if status == 201 then
      ok = ok + 1
      created = created + 1
      if mode ~= "acquire" then
         local name = body:match('"name"%s*:%s*"([^"]*)"')
         local token = body:match('"token"%s*:%s*(%d+)')
         local secret = body:match('"lease_secret"%s*:%s*"(%x+)"')
         if name and token and secret then
            if mode == "cycle" then
               pending[#pending + 1] = { name, token, secret }
            else
               pool[#pool + 1] = { name, token, secret }
            end
         end
      end
   elseif status == 200 or status == 204 then
      ok = ok + 1
   elseif status == 409 then
      held = held + 1
   else
      other = other + 1
   end
end

function done(summary, latency, requests)
   local t = { ok = 0, held = 0, other = 0, acquires = 0, releases = 0,
      renews = 0, strbytes = 0, created = 0 }
   for _, th in ipairs(threads) do
      for k, _ in pairs(t) do t[k] = t[k] + (th:get(k) or 0) end
   end
   io.write(string.format(
      "lua: mode=%s acquires=%d releases=%d renews=%d ok=%d held=%d other=%d created=%d strbytes=%d\n",
      threads[1] and threads[1]:get("mode") or mode, t.acquires, t.releases, t.renews, t.ok, t.held, t.other, t.created, t.strbytes))
end
