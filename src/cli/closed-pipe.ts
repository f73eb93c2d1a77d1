// `mrtr tools … | head`: once the reader of stdout (or stderr) has gone, there is nobody to tell anything to. Node
// turns the failed write into an unhandled 'error' event and a stack trace; a command line ends quietly instead,
// as `ls | head` does.
export function exitQuietlyOnClosedPipe(
  streams: NodeJS.WriteStream[] = [process.stdout, process.stderr],
): void {
  for (const stream of streams)
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    });
}
