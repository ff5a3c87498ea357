/** A server's memory from /proc: resident size now, and its peak over an interval. */
import { readFileSync, writeFileSync } from 'node:fs';
import { processTree } from './processes';

function procStatusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Resident set size now, in MB (Linux /proc). */
export const rssMb = (pid: number): number | undefined => {
  const kb = procStatusKb(pid, 'VmRSS');
  return kb === undefined ? undefined : kb / 1024;
};

/**
 * Peak RSS of a process over an interval: the kernel's high-water mark
 * (VmHWM), reset at the start by writing 5 to /proc/PID/clear_refs, and, as a
 * cross-check and fallback, the largest VmRSS polled every 50 ms.
 */
export class PeakRss {
  private polledKb = 0;
  private hwmReset = false;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number) {
    try {
      for (const member of processTree(pid)) writeFileSync(`/proc/${member}/clear_refs`, '5');
      this.hwmReset = true;
    } catch {
      this.hwmReset = false;
    }
    this.poll();
    this.timer = setInterval(() => this.poll(), 50);
  }

  /** Of the process and its workers together (WORKERS=N). */
  private poll(): void {
    const total = processTree(this.pid).reduce((sum, member) => sum + (procStatusKb(member, 'VmRSS') ?? 0), 0);
    this.polledKb = Math.max(this.polledKb, total);
  }

  stopIfRunning(): void {
    clearInterval(this.timer);
  }

  /** Peak in MB, or undefined where /proc is not available. */
  stop(): number | undefined {
    clearInterval(this.timer);
    this.poll();
    const hwm = this.hwmReset ? processTree(this.pid).reduce((sum, member) => sum + (procStatusKb(member, 'VmHWM') ?? 0), 0) : undefined;
    const peakKb = Math.max(hwm ?? 0, this.polledKb);
    return peakKb > 0 ? peakKb / 1024 : undefined;
  }
}
