-- A filtered, sorted page as a shop's Pets screen asks for it: one of the 6 categories,
-- available or sold, sorted by name up or down, 20 per page, one of the first 50 pages of
-- that filter (offset 0..980). Deep pages are timed apart by the driver.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")

local statuses = { "available", "sold" }
local sorts = { "name", "-name" }

function request()
   local path = string.format(
      "/pets?categoryId=%d&status=%s&sort=%s&limit=20&offset=%d",
      math.random(1, 6),
      statuses[math.random(1, 2)],
      sorts[math.random(1, 2)],
      20 * math.random(0, 49)
   )
   return wrk.format("GET", path)
end
