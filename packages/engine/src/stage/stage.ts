import type { Request, RequestHandler, Response } from 'express';

/**
 * One step of a compiled request pipeline: it reads and decorates the request,
 * sets response headers, or writes the response; it throws (or rejects) to
 * answer with an error. A synchronous stage returns nothing and costs a
 * function call: no `next` closure, no promise, no router layer.
 *
 * @example const requireJson: Stage = (req) => { if (!req.is('json')) throw new ApiError(415, ...); };
 */
export type Stage = (req: Request, res: Response) => void | Promise<void>;

/**
 * Runs stages in order as one Express middleware: synchronously until a stage
 * returns a promise, then from where it resolves. A failure goes to `next`
 * (the error mapper); when every stage has run, `next()` unless the last one
 * answered (`respond: true`).
 *
 * @example app.use(runStages([identify, authenticate, validate, answer], { respond: true }));
 */
export function runStages(stages: readonly Stage[], { respond }: { respond: boolean }): RequestHandler {
  const count = stages.length;
  return (req, res, next) => {
    // `next(undefined)` would mean "carry on" to Express: a failure always carries an error.
    const fail = (error: unknown): void => next(failure(error));
    let index = 0;
    const resume = (): void => {
      try {
        while (index < count) {
          const pending = stages[index++]!(req, res);
          if (pending !== undefined) {
            pending.then(resume, fail);
            return;
          }
        }
      } catch (error) {
        fail(error);
        return;
      }
      if (!respond) next();
    };
    resume();
  };
}

/**
 * An Express middleware as a stage that always returns a promise (the body
 * parsers, which read the socket): `fromMiddlewares` of that one middleware.
 */
export function fromMiddleware(middleware: RequestHandler): (req: Request, res: Response) => Promise<void> {
  const run = fromMiddlewares([middleware]);
  return (req, res) => run(req, res) ?? Promise.resolve();
}

/**
 * Express middlewares as one stage, run in order like a router runs them:
 * synchronously while each calls `next` before it returns (then the stage
 * costs no promise), else from where a late `next` resumes. A failure, thrown
 * or passed to `next`, rejects; an error passed to `next` after the stage
 * has settled (a response validator's, from its `res.json` wrapper) reaches
 * the router's own `next` (`req.next`), hence the error mapper.
 *
 * @example const validate = fromMiddlewares(OpenApiValidator.middleware(options));
 */
export function fromMiddlewares(middlewares: readonly RequestHandler[]): Stage {
  const count = middlewares.length;
  return (req, res) => {
    let index = 0;
    let outcome: 'done' | { error: unknown } | undefined;
    let waiter: { resolve(): void; reject(error: unknown): void } | undefined;
    let running = false;
    let called = false;
    const settle = (result: 'done' | { error: unknown }): void => {
      outcome = result;
      if (!waiter) return;
      if (result === 'done') waiter.resolve();
      else waiter.reject(result.error);
    };
    const next = (error?: unknown): void => {
      if (outcome !== undefined) {
        if (error) req.next?.(error);
        return;
      }
      if (error) {
        settle({ error: failure(error) });
        return;
      }
      called = true;
      if (!running) run();
    };
    const run = (): void => {
      running = true;
      try {
        while (outcome === undefined) {
          if (index === count) {
            settle('done');
            break;
          }
          called = false;
          const result = middlewares[index++]!(req, res, next) as unknown;
          if (result instanceof Promise) result.catch((error: unknown) => next(failure(error)));
          if (!called) break;
        }
      } catch (error) {
        if (outcome === undefined) settle({ error: failure(error) });
      }
      running = false;
    };
    run();
    if (outcome === 'done') return undefined;
    if (outcome !== undefined) return Promise.reject(outcome.error);
    return new Promise<void>((resolve, reject) => {
      waiter = { resolve, reject };
    });
  };
}

/** What was thrown, or an Error when a stage threw (or rejected with) nothing usable, such as `undefined`. */
const failure = (error: unknown): unknown => error || new Error(`a request stage failed without an error (${String(error)})`);

/** A stage as an Express middleware, for the routes that are not compiled pipelines. */
export const asMiddleware = (stage: Stage): RequestHandler => runStages([stage], { respond: false });
