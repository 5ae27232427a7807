import type { SQSClient } from '@aws-sdk/client-sqs';

/** One call the fake saw: the command's class name and input. */
export interface FakeCall {
  command: string;
  input: Record<string, unknown>;
}

type Answer = (input: Record<string, unknown>) => unknown;

/**
 * A stand-in `SQSClient` for unit tests: records every command and answers from per-command
 * handlers (throwing from one simulates an SQS error).
 */
export function fakeClient(answers: Record<string, Answer> = {}): {
  client: SQSClient;
  calls: FakeCall[];
} {
  const calls: FakeCall[] = [];
  const client = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      const name = command.constructor.name;
      calls.push({ command: name, input: command.input });
      const answer = answers[name];
      return answer ? answer(command.input) : {};
    },
    destroy: () => undefined,
  };
  return { client: client as unknown as SQSClient, calls };
}

/** An error shaped like the SDK's service exceptions (matched by `name`). */
export function sqsError(name: string, message = name): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}
