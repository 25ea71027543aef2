-- SPDX-License-Identifier: MIT
-- wrk script for bench/suite.sh: etcd lock transactions through etcd's
-- HTTP/JSON gateway, the way a lock is taken in etcd: a transaction that
-- puts the lock key only if it does not exist yet (create_revision == 0).
--   wrk -c C -t T -d D -s bench/etcd-txn.lua http://127.0.0.1:PORT -- NONCE
-- Every key is new, so every transaction succeeds (and is fsynced).
local threads = {}
local next_id = 0
local nonce = "0"
local counter = 0
succeeded, failed = 0, 0
-- Requests are built by bench/json_req.lua, found from this script's path.
local json_req = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./")
   .. "json_req.lua")

function setup(thread)
   next_id = next_id + 1
   thread:set("id", next_id)
   table.insert(threads, thread)
end

function init(args)
   if args[1] ~= nil then nonce = args[1] end
end

local b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

local function base64(s)
   local out = {}
   for i = 1, #s, 3 do
      local a, b, c = s:byte(i, i + 2)
      local n = a * 65536 + (b or 0) * 256 + (c or 0)
      local q = {}
      for k = 3, 0, -1 do
         local v = math.floor(n / (64 ^ k)) % 64
         q[#q + 1] = b64:sub(v + 1, v + 1)
      end
      if not b then q[3] = "=" end
      if not c then q[4] = "=" end
      out[#out + 1] = table.concat(q)
   end
   return table.concat(out)
end

local value = base64("bench")

function request()
   counter = counter + 1
   local key = base64("lock/" .. nonce .. "-" .. id .. "-" .. counter)
   local body = '{"compare":[{"key":"' .. key ..
      '","target":"CREATE","result":"EQUAL","create_revision":"0"}],' ..
      '"success":[{"request_put":{"key":"' .. key .. '","value":"' .. value .. '"}}]}'
   return json_req("POST", "/v3/kv/txn", body)
end

function response(status, hdrs, body)
   if status == 200 and body:find('"succeeded":true', 1, true) then
      succeeded = succeeded + 1
   else
      failed = failed + 1
   end
end

function done(summary, latency, requests)
   local s, f = 0, 0
   for _, th in ipairs(threads) do
      s = s + th:get("succeeded"); f = f + th:get("failed")
   end
   io.write(string.format("lua: succeeded=%d failed=%d\n", s, f))
end
