-- POST /store/orders for one of a random pet. Sold or sold-out pets are refused (409), so
-- every status is tallied: the driver counts only the 201s as throughput and checks them
-- against the orders that reached the database.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")

local common_init = init
function init(args)
   common_init(args)
   wrk.headers["Content-Type"] = "application/json"
   statuses = {}
end

function request()
   local body = string.format('{"petId": %d, "quantity": 1}', math.random(1, max_id))
   return wrk.format("POST", "/store/orders", nil, body)
end

function response(status, headers, body)
   statuses[status] = (statuses[status] or 0) + 1
end

-- One line per status, summed over the threads: "status 201 12345".
function done(summary, latency, requests)
   local total = {}
   for _, thread in ipairs(threads) do
      for status, count in pairs(thread:get("statuses")) do
         total[status] = (total[status] or 0) + count
      end
   end
   for status, count in pairs(total) do
      io.write(string.format("status %d %d\n", status, count))
   end
end
