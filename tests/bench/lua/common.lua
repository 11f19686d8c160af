-- Shared by every scenario (each script loads it first). wrk runs one Lua state per
-- thread plus one for setup/done; these globals live in each of them.
--
-- Environment (set by tests/bench/run.py):
--   BENCH_KEY     the API key, sent as `Authorization: Bearer KEY` on every request
--   BENCH_MAX_ID  the highest pet id in the database (ids are 1..BENCH_MAX_ID)

threads = {}

function env(name)
   local value = os.getenv(name)
   if value == nil or value == "" then
      error(name .. " is not set (tests/bench/run.py sets it)")
   end
   return value
end

function setup(thread)
   table.insert(threads, thread)
   thread:set("thread_number", #threads)
end

function init(args)
   -- A fixed seed per thread: the threads ask for different ids from each other, and
   -- every run asks for the same ones, so runs compare like with like.
   math.randomseed(1000 + thread_number)
   max_id = tonumber(env("BENCH_MAX_ID"))
   wrk.headers["Authorization"] = "Bearer " .. env("BENCH_KEY")
end
