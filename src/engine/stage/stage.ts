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
 * An Express middleware as a stage. It must call `next` once, or throw. A
 * middleware that keeps `next` for later (express-openapi-validator's response
 * validator calls it from its `res.json` wrapper when a response breaks the
 * contract) reaches the router's own `next` (`req.next`), hence the error mapper.
 */
export function fromMiddleware(middleware: RequestHandler): (req: Request, res: Response) => Promise<void> {
  return (req, res) =>
    new Promise<void>((resolve, reject) => {
      let settled = false;
      const next = (error?: unknown): void => {
        if (settled) {
          if (error) req.next?.(error);
          return;
        }
        settled = true;
        if (error) reject(error);
        else resolve();
      };
      const result = middleware(req, res, next) as unknown;
      if (result instanceof Promise) result.catch((error: unknown) => next(failure(error)));
    });
}

/** What was thrown, or an Error when a stage threw (or rejected with) nothing usable, such as `undefined`. */
const failure = (error: unknown): unknown => error || new Error(`a request stage failed without an error (${String(error)})`);

/**
 * Several stages as one, run like `runStages` runs them: synchronously until
 * one returns a promise, then from where it resolves.
 *
 * @example const validate = chain([reduceContentType, lookUpRoute, checkRequest]);
 */
export function chain(stages: readonly Stage[]): Stage {
  if (stages.length === 1) return stages[0]!;
  const count = stages.length;
  const runFrom = (req: Request, res: Response, from: number): void | Promise<void> => {
    for (let index = from; index < count; index++) {
      const pending = stages[index]!(req, res);
      if (pending !== undefined) return pending.then(() => runFrom(req, res, index + 1));
    }
  };
  return (req, res) => runFrom(req, res, 0);
}

/** A stage as an Express middleware, for the routes that are not compiled pipelines. */
export const asMiddleware = (stage: Stage): RequestHandler => runStages([stage], { respond: false });
