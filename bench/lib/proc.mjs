// What /proc says about a process: its CPU time, its memory, its descendants. Shared by the bench's parent (the
// windows it measures) and the gateway launcher (the processes it must stop).
import { readdirSync, readFileSync } from 'node:fs';

// Linux reports /proc CPU times in USER_HZ ticks, 100 per second on every mainstream build.
export const USER_HZ = 100;

export function readStatus(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key) => {
      const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(s);
      return m ? Number(m[1]) : 0;
    };
    return { rssKb: kb('VmRSS'), hwmKb: kb('VmHWM') };
  } catch {
    return null;
  }
}

export function readCpuTicks(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    // after ")": state(0) ppid(1) ... utime(11) stime(12)
    return Number(f[11]) + Number(f[12]);
  } catch {
    return null;
  }
}

/** The pid plus all its descendants (scan of /proc; done rarely). */
export function processTree(rootPid) {
  const parent = new Map();
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const s = readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(e), ppid);
    } catch {
      /* raced with exit */
    }
  }
  const tree = [rootPid];
  for (let i = 0; i < tree.length; i++) for (const [p, pp] of parent) if (pp === tree[i]) tree.push(p);
  return tree;
}
