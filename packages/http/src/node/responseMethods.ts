import type { ServerResponse } from 'node:http';

/** The methods that send a response, as they were before a binding replaced them. */
export interface RealResponseMethods {
  writeHead: (this: ServerResponse, statusCode: number, ...rest: unknown[]) => unknown;
  write: (this: ServerResponse, chunk: unknown, ...rest: unknown[]) => boolean;
  end: (this: ServerResponse, ...rest: unknown[]) => unknown;
}

/** The response methods as they are now (another middleware may have wrapped them). */
export function currentMethods(res: ServerResponse): RealResponseMethods {
  return {
    writeHead: res.writeHead as RealResponseMethods['writeHead'],
    write: res.write as RealResponseMethods['write'],
    end: res.end as RealResponseMethods['end'],
  };
}
