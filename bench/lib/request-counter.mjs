// The HTTP upstreams of the gateway bench count the POSTs they receive, by JSON-RPC method, and answer the counts on
// `GET /bench-count`. The parent reads them before and after a window, so "upstream requests per call" is counted
// where the requests arrive.

export function requestCounter() {
  const counts = { requests: 0, byMethod: {} };
  return {
    /** One POST carrying `method` (a response or a batch counts as "other"). */
    note(method) {
      const key = typeof method === 'string' ? method : 'other';
      counts.requests++;
      counts.byMethod[key] = (counts.byMethod[key] ?? 0) + 1;
    },
    /** Answer GET /bench-count; true when this request was that. */
    answered(req, res) {
      if (req.method !== 'GET' || req.url !== '/bench-count') return false;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(counts));
      return true;
    },
  };
}
