// What every benchmarked child server does around its listener: take `--port P` (0 = ephemeral), keep connections
// alive, print the ready line the parent waits for, and exit on SIGTERM/SIGINT once the server has closed.
export function listenAsBenchChild(http) {
  const portArg = process.argv.indexOf('--port');
  const port = portArg > 0 ? Number(process.argv[portArg + 1]) : 0;
  http.keepAliveTimeout = 60_000;
  http.listen(port, '127.0.0.1', () => {
    console.log(`listening on http://127.0.0.1:${http.address().port}/mcp`);
  });
  const stop = () => http.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
