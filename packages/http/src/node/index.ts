// @idemq/http/node: the node:http binding, with no WHATWG Request or Response in the way.

export type { NodeAnswer, NodeHeaders } from './nodeAnswer.js';
export {
  idempotency,
  type NodeContext,
  type NodeIdempotencyOptions,
  type NodeListener,
  type NodeRoute,
} from './nodeBinding.js';
