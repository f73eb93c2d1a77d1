// mrtr/files (internal): what every room that writes a local file needs of the file system, once. It imports
// nothing of ours but protocol's MrtrError, so stores, audit and cli can all reach it.
export { DirectoryError, makeParentDirectory } from './parent-dir.js';
export { type PragmaRunner, switchToWal, type WalSwitchOptions } from './sqlite-wal.js';
