import { ApiError } from '../errors/api-error';
import { asMiddleware, type Stage } from '../pipeline/stage';

/**
 * Every query parameter of the contract is a single value: a repeated one
 * (`limit=1&limit=2`) or bracket syntax (`limit[]=1`, `status[a]=b`) is a 400
 * naming the rule, instead of the validator's puzzling "must be integer".
 *
 * @example stages.push(refuseRepeatedQuery);
 */
export const refuseRepeatedQuery: Stage = (req) => {
  const search = req.originalUrl.indexOf('?');
  if (search !== -1) {
    const seen = new Set<string>();
    for (const name of new URLSearchParams(req.originalUrl.slice(search + 1)).keys()) {
      if (/[[\]]/.test(name)) {
        throw new ApiError(400, 'invalid_request', `query.${name} is not allowed: arrays and objects (name[]=, name[key]=) are not supported`);
      }
      if (seen.has(name)) throw new ApiError(400, 'invalid_request', `query.${name} must be given at most once`);
      seen.add(name);
    }
  }
};

/** `refuseRepeatedQuery` as a middleware. @example api.use(singleValuedQuery); */
export const singleValuedQuery = asMiddleware(refuseRepeatedQuery);
