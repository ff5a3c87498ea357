/** What a command run in-process produces: the CLIs print it, the tests read it. */
export interface CommandOutcome {
  /** 0 passed, 1 refused (breaking change not announced, release refused), 2 bad input. */
  exitCode: 0 | 1 | 2;
  stdout: string;
  stderr: string;
}

/** Prints an outcome; returns its exit code (the command's last step). */
export function emit(outcome: CommandOutcome): number {
  process.stdout.write(outcome.stdout);
  process.stderr.write(outcome.stderr);
  return outcome.exitCode;
}
