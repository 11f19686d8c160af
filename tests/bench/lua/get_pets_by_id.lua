-- GET /pets?id={petId} with a random existing id: the list operation, one pet long.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")

function request()
   return wrk.format("GET", "/pets?id=" .. math.random(1, max_id))
end
