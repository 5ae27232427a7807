import { appendFileSync } from 'node:fs';
import type { ServerUnaryCall, sendUnaryData, UntypedServiceImplementation } from '@grpc/grpc-js';
import type { ProcessImplementationSetup } from './harness.js';
import type { ChargeReply, ChargeRequest } from './paymentsService.js';

/**
 * The Payments implementation a harness's server process serves for G12: each Charge appends
 * `start <pid>` to `countFile`, holds `holdMs`, appends `end <pid>` and answers `done by <pid>`.
 * The lines are written synchronously, so the count survives a SIGKILL of the process.
 */
export function processImplementation(
  setup: ProcessImplementationSetup,
): UntypedServiceImplementation {
  return {
    Charge(
      call: ServerUnaryCall<ChargeRequest, ChargeReply>,
      callback: sendUnaryData<ChargeReply>,
    ) {
      appendFileSync(setup.countFile, `start ${process.pid}\n`);
      setTimeout(() => {
        appendFileSync(setup.countFile, `end ${process.pid}\n`);
        callback(null, {
          charge_id: `done by ${process.pid}`,
          amount: call.request.amount,
          receipt: new Uint8Array(),
        });
      }, setup.holdMs);
    },
  };
}
