-- SPDX-License-Identifier: MIT
-- The request builder the wrk scripts share (bench/tenured.lua,
-- bench/acquire-release.lua, bench/etcd-txn.lua, scripts/pg-bench.lua):
--   local json_req = dofile(dir .. "json_req.lua")
--   return json_req("POST", "/v1/leases", body)
-- One concatenation per request: wrk.format builds a table of header
-- lines and formats each one, which costs the load generator, on the same
-- two cores as the server, a measurable share of every request
-- (docs/history/perf-log.md, fifth campaign).
local head -- " HTTP/1.1\r\nHost: ...\r\n...Content-Length: "
return function(method, path, body)
   if head == nil then
      head = " HTTP/1.1\r\nHost: " .. wrk.headers["Host"] ..
         "\r\nContent-Type: application/json\r\nContent-Length: "
   end
   return method .. " " .. path .. head .. #body .. "\r\n\r\n" .. body
end
