-- wrk script for scripts/serve_load.sh: POSTs the JSON body in the file
-- $BODY to every request and counts the non-200 answers.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = assert(io.open(os.getenv("BODY"), "r"))
wrk.body = f:read("*a")
f:close()
local token = os.getenv("FATHOM_SERVE_TOKEN")
if token and token ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. token
end
