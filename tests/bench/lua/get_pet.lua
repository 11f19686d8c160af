-- GET /pets/{petId} with a random existing id. The ceiling server gets this same script,
-- so the load generator does the same work for both.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")

function request()
   return wrk.format("GET", "/pets/" .. math.random(1, max_id))
end
