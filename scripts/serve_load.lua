-- wrk script for scripts/serve_load.sh: POSTs the JSON body in the file
-- $BODY to every request (with $HEADER_LENGTH, the binary tensor data
-- extension's JSON header length, when set) and counts the non-200 answers.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = assert(io.open(os.getenv("BODY"), "r"))
wrk.body = f:read("*a")
f:close()
local hlen = os.getenv("HEADER_LENGTH")
if hlen and hlen ~= "" then
  wrk.headers["Inference-Header-Content-Length"] = hlen
end
local token = os.getenv("FATHOM_SERVE_TOKEN")
if token and token ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. token
end

-- With $PACE_MS, each connection waits that long before each request.
local pace = tonumber(os.getenv("PACE_MS") or "")
if pace then
  function delay()
    return pace
  end
end
